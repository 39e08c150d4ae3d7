// Inside an embedded calendar view: tells the page that frames it how tall the view is, so
// that the frame shows it whole (read by /assets/embed.js).
(function () {
  if (window.parent === window) return;
  var last = 0;
  function report() {
    var height = document.documentElement.scrollHeight;
    if (height !== last) {
      last = height;
      window.parent.postMessage({ almanacHeight: height }, "*");
    }
  }
  window.addEventListener("load", report);
  window.addEventListener("resize", report);
  if (window.ResizeObserver) new ResizeObserver(report).observe(document.body);
  report();
})();
