from __future__ import annotations

from django.urls import path

from controlplane.demo.api import views

urlpatterns = [
    path("demo/traffic/", views.DemoTrafficView.as_view(), name="demo-traffic"),
]
