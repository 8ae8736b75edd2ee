// The nav's count of firing alerts, on every page, refreshed every 15 s.
import { get, poller } from "./api.js";

const badge = document.getElementById("firing-count");
if (badge) {
  poller(async () => {
    const firing = await get("/api/v1/alerts/?state=firing&limit=1");
    const count = firing.count ?? firing.length;
    badge.textContent = String(count);
    badge.hidden = count === 0;
    return 15000;
  }).now();
}
