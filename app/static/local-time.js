// Times arrive in UTC; where the browser knows its time zone, say them in the reader's own.
// A time said in a named zone (data-zone: an assignment's dates) is meant in that zone.
for (const time of document.querySelectorAll("time[datetime]:not([data-zone])")) {
  const moment = new Date(time.dateTime);
  if (!Number.isNaN(moment.getTime())) {
    time.title = time.textContent;
    // A clock (when this attempt ends) reads like the one on the student's wall.
    time.textContent = time.classList.contains("clock")
      ? `${moment.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })} (your time)`
      : moment.toLocaleString(undefined, {
          day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit",
          timeZoneName: "short",
        });
  }
}
