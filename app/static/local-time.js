// Every time on a page is said in one zone, labelled (app/formatting.py). The server learns the
// browser's zone from this cookie; until it has, or where the page's zone is not the browser's
// and no instructor chose it, the times are restated here in the browser's own.
// In a block of its own: the page's other scripts share the global scope.
{
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone) {
    document.cookie = `zone=${encodeURIComponent(zone)}; path=/; max-age=31536000; samesite=lax`;
  }
  const chosen = document.documentElement.hasAttribute("data-zone-chosen");
  const thisYear = new Date().getFullYear();
  for (const time of document.querySelectorAll("time[datetime][data-zone]")) {
    const moment = new Date(time.dateTime);
    if (chosen || !zone || time.dataset.zone === zone || Number.isNaN(moment.getTime())) continue;
    time.title = time.textContent;
    const shape = time.classList.contains("clock")
      ? { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }
      : {
          weekday: "short", day: "numeric", month: "short", hour: "2-digit", minute: "2-digit",
          hourCycle: "h23", year: moment.getFullYear() === thisYear ? undefined : "numeric",
        };
    time.textContent = moment.toLocaleString(undefined, { ...shape, timeZoneName: "short" });
    time.dataset.zone = zone;
  }
  if (!chosen && zone) {
    for (const name of document.querySelectorAll("[data-zone-name]")) name.textContent = zone;
  }
  // A fresh assignment form whose zone nobody chose starts on the browser's.
  const select = document.querySelector("select[data-browser-default]");
  if (select && !chosen && zone && [...select.options].some((option) => option.value === zone)) {
    select.value = zone;
  }
}
