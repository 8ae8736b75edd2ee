from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.flows.api.browse import ClusterBrowseViewSet
from controlplane.flows.api.mirror import ClusterMirrorViewSet
from controlplane.flows.api.records import FlowRecordsViewSet
from controlplane.flows.api.views import FlowViewSet

router = SimpleRouter()
router.register("flows", FlowViewSet)

# Reads under clusters/<id>/ (MirrorClient's three and the cluster browser), served here beside the flows that name
# the cluster's remote topics and replicate its topics. Kept out of the merged router, so the API root keeps listing
# "clusters" from the clusters app's own router.
_mirror = SimpleRouter()
_mirror.register("clusters", ClusterMirrorViewSet, basename="cluster")
_mirror.register("clusters", ClusterBrowseViewSet, basename="cluster-browse")
# A flow's records, here too: a second "flows" entry in the merged router would take the first's place in the root.
_mirror.register("flows", FlowRecordsViewSet, basename="flow-records")
cluster_read_urlpatterns = _mirror.urls

urlpatterns = router.urls + cluster_read_urlpatterns
