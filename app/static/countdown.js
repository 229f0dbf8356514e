// The time left on a timed attempt. It counts from the seconds the server gave with the page,
// not from the computer's clock, which may be wrong by minutes.
const clock = document.querySelector("[data-seconds-left]");
if (clock) {
  const left = clock.querySelector(".countdown");
  const status = clock.querySelector("[role=status]");
  const end = performance.now() + Number(clock.dataset.secondsLeft) * 1000;
  // A screen reader hears the time at these marks only: every second would drown the question.
  const marks = [30 * 60, 15 * 60, 10 * 60, 5 * 60, 2 * 60, 60, 30, 0];
  const secondsLeft = () => Math.max(0, Math.ceil((end - performance.now()) / 1000));
  let lastMark = marks.filter((mark) => mark >= secondsLeft()).pop() ?? Infinity;

  const inWords = (seconds) => {
    if (seconds === 0) return "Time is up. Your saved answers count.";
    if (seconds < 60) return `${seconds} seconds left.`;
    const minutes = Math.round(seconds / 60);
    return `${minutes} minute${minutes === 1 ? "" : "s"} left.`;
  };
  const onDial = (seconds) => {
    const hours = Math.floor(seconds / 3600);
    const minutes = Math.floor((seconds % 3600) / 60);
    const rest = String(seconds % 60).padStart(2, "0");
    return hours ? `${hours}:${String(minutes).padStart(2, "0")}:${rest}` : `${minutes}:${rest}`;
  };

  // At 0:00 the server refuses answers (after a few seconds' grace for ones already on their
  // way): a button that still looks ready would only lead to that refusal.
  // On an exam's page, an answer chosen but not saved when the time runs out is sent at once,
  // in the seconds of grace the server still takes it: what the student chose is not lost.
  const sendChosen = () => {
    const form = document.querySelector(".answer-form");
    const finish = form?.querySelector("button[value=summary]");
    const given = form?.querySelectorAll("input[name=choice]:checked, input[name=typed]") ?? [];
    const chosen = [...given].some((input) => input.type !== "text" || input.value.trim());
    if (!finish || !chosen) return false;
    form.requestSubmit(finish);
    return true;
  };

  const stopAnswers = () => {
    if (sendChosen()) return;
    const buttons = [...document.querySelectorAll(".answer-form button")];
    if (!buttons.length || buttons[0].disabled) return;
    for (const button of buttons) button.disabled = true;
    const note = document.createElement("p");
    note.className = "hint";
    note.textContent = "Time is up, so no more answers can be saved.";
    buttons[0].after(note);
  };

  const tick = () => {
    const seconds = secondsLeft();
    left.textContent = seconds ? `${onDial(seconds)} left` : "Time is up";
    const mark = marks.filter((each) => each < lastMark && seconds <= each).pop();
    if (mark !== undefined) {
      lastMark = mark;
      status.textContent = inWords(seconds);
    }
    if (seconds) setTimeout(tick, 1000 - ((end - performance.now()) % 1000));
    else stopAnswers();
  };
  left.hidden = false;
  tick();
}
