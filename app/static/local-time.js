// Times arrive in UTC; where the browser knows its time zone, say them in the reader's own.
for (const time of document.querySelectorAll("time[datetime]")) {
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
