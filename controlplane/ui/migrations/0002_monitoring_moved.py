"""The time series and observations moved to the monitoring app, rows and all (monitoring 0001); here they only leave
ui's state, so no table is dropped."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ui", "0001_initial"), ("monitoring", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="ClusterObservation"),
                migrations.DeleteModel(name="FlowObservation"),
                migrations.DeleteModel(name="FlowSample"),
            ],
        ),
    ]
