// Embeds almanac calendar views in another site's page:
//   <div data-almanac-view="month" data-categories="music" data-language="es"></div>
//   <script src="https://calendar.example.org/assets/embed.js" defer></script>
// Each element becomes a frame of /embed/… (views: list, month, week, day; filters:
// data-categories, data-tags, data-search, data-venue, data-organizer, data-featured), sized to
// its content. The site must allow the page's origin (serve --embed-origins).
(function () {
  var script = document.currentScript;
  if (!script) return;
  var base = script.src.replace(/\/assets\/embed\.js(\?.*)?$/, "");
  var origin = new URL(base).origin;
  var views = { list: "list/", month: "month/", week: "week/", day: "today/" };
  var frames = [];
  function address(el) {
    var d = el.dataset;
    var path = "/embed";
    if (d.language === "es" || d.language === "pt-br") path += "/" + d.language;
    var category = (d.categories || "").split(",")[0].trim();
    var tag = (d.tags || "").split(",")[0].trim();
    if (category) path += "/events/category/" + encodeURIComponent(category) + "/";
    else if (tag) path += "/tag/" + encodeURIComponent(tag) + "/";
    else path += "/events/";
    path += views[d.almanacView] || "";
    var query = new URLSearchParams();
    if (d.search) query.set("s", d.search);
    if (d.venue) query.set("venue", d.venue);
    if (d.organizer) query.set("organizer", d.organizer);
    if (d.featured === "1" || d.featured === "true") query.set("featured", "1");
    var q = query.toString();
    return base + path + (q ? "?" + q : "");
  }
  function mount() {
    var elements = document.querySelectorAll("[data-almanac-view]");
    for (var i = 0; i < elements.length; i++) {
      var el = elements[i];
      if (el.querySelector("iframe")) continue;
      var frame = document.createElement("iframe");
      frame.src = address(el);
      frame.title = el.dataset.title || "Calendar";
      frame.loading = "lazy";
      frame.style.width = "100%";
      frame.style.border = "0";
      frame.style.minHeight = "200px";
      el.appendChild(frame);
      frames.push(frame);
    }
  }
  window.addEventListener("message", function (event) {
    if (event.origin !== origin || !event.data || typeof event.data.almanacHeight !== "number") return;
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === event.source) {
        frames[i].style.height = Math.ceil(event.data.almanacHeight) + "px";
      }
    }
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
