/// The console's stylesheet and its one script, served from memory under `/console/assets/`.
///
/// Hand-written and small: no build step, no third-party code, nothing fetched from another
/// origin. The pages work without the script; it only adds conveniences (the erase button waits
/// for the typed confirmation, the project switcher switches on change, danger buttons ask first,
/// times read relative, in UTC or in local time).
enum ConsoleAssets {
    enum Asset: Sendable {
        case css, javascript

        var contentType: String {
            switch self {
            case .css: "text/css; charset=utf-8"
            case .javascript: "text/javascript; charset=utf-8"
            }
        }

        var bytes: [UInt8] {
            switch self {
            case .css: Array(ConsoleAssets.css.utf8)
            case .javascript: Array(ConsoleAssets.javascript.utf8)
            }
        }
    }

    static let css = """
        :root { color-scheme: light dark; --ink: #1b1f24; --muted: #4d5661; --line: #d5dae0; --paper: #ffffff; --wash: #f4f6f8;
          --accent: #0b5cad; --on-accent: #ffffff; --danger: #a4161a; --ok: #1d6b32; --notice: #e6f4ea; --alert: #fde8e8;
          --secret: #fff8e1; --secret-line: #b7791f; --field-line: #6b7480; --focus: #14213d; --focus-halo: #f2b705;
          font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
        @media (prefers-color-scheme: dark) {
          :root { --ink: #e6e9ed; --muted: #aeb7c1; --line: #3b434d; --paper: #1b2026; --wash: #111418;
            --accent: #8cc2ff; --on-accent: #0b1320; --danger: #ff9b96; --ok: #7fd99a; --notice: #15301f; --alert: #3b1618;
            --secret: #352b10; --secret-line: #d9a33a; --field-line: #8a949f; --focus: #f2b705; --focus-halo: #0b1320; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; color: var(--ink); background: var(--wash); line-height: 1.45; }
        a { color: var(--accent); }
        a:focus, button:focus, input:focus, select:focus, textarea:focus { outline: 3px solid var(--focus); outline-offset: 1px;
          box-shadow: 0 0 0 5px var(--focus-halo); }
        header.top a:focus, header.top button:focus, header.top input:focus, header.top select:focus { outline-color: #f2b705; }
        .field-error { color: var(--danger); font-weight: 600; margin: .2rem 0 .5rem; }
        input[aria-invalid="true"] { border: 2px solid var(--danger); }
        .skip { position: absolute; left: -999px; top: 0; background: var(--paper); padding: .5rem; }
        .skip:focus { left: .5rem; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
        header.top { display: flex; flex-wrap: wrap; gap: .75rem 1.5rem; align-items: center; padding: .6rem 1.25rem;
          background: #14213d; color: #fff; }
        header.top a { color: #fff; }
        header.top .brand { font-weight: 700; font-size: 1.1rem; text-decoration: none; }
        header.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
        header.top nav a[aria-current="page"] { text-decoration-thickness: 3px; font-weight: 600; }
        header.top form.search { display: flex; gap: .25rem; flex: 1 1 18rem; }
        header.top form.search input { flex: 1; min-width: 12rem; }
        header.top .who { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
        header.top .who form { display: flex; gap: .25rem; align-items: center; margin: 0; }
        header.top button.link { background: none; border: 1px solid #fff; color: #fff; }
        main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
        body.bare main { max-width: 30rem; margin-top: 3rem; background: var(--paper); border: 1px solid var(--line); border-radius: 8px; }
        h1 { font-size: 1.5rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
        h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
        section { background: var(--paper); border: 1px solid var(--line); border-radius: 8px; padding: .25rem 1rem 1rem; margin: 1rem 0; }
        p.notice { background: var(--notice); border: 1px solid var(--ok); padding: .5rem .75rem; border-radius: 6px; }
        p.error { background: var(--alert); border: 1px solid var(--danger); padding: .5rem .75rem; border-radius: 6px; }
        .small { font-size: .875rem; color: var(--muted); }
        .table-wrap { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; background: var(--paper); }
        caption { text-align: left; font-weight: 600; padding: .25rem 0; }
        th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { background: var(--wash); }
        code { font-family: ui-monospace, "SF Mono", Menlo, monospace; font-size: .875rem; overflow-wrap: anywhere; }
        code.data { display: block; min-width: 16rem; max-width: 36rem; white-space: pre-wrap; overflow-wrap: anywhere; }
        dl.data { margin: 0; min-width: 16rem; font-size: .875rem; }
        dl.data div { display: flex; gap: .5rem; }
        dl.data dt { color: var(--muted); white-space: nowrap; }
        dl.data dd { font-weight: 400; overflow-wrap: anywhere; }
        dl.facts, dl.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .5rem 1rem; }
        dl.facts div, dl.stats div { background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: .5rem .75rem; }
        dt { font-size: .8rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
        svg.chart { display: block; width: 100%; max-width: 60rem; height: auto; margin: .5rem 0; }
        svg.chart .identified, .swatch.identified { fill: var(--accent); background: var(--accent); }
        svg.chart .anonymous, .swatch.anonymous { fill: var(--secret-line); background: var(--secret-line); }
        svg.chart .conversion { fill: var(--ok); }
        svg.chart .axis { fill: var(--muted); font-size: 11px; }
        svg.chart .grid { stroke: var(--line); stroke-dasharray: 4 4; }
        svg.chart .base { stroke: var(--muted); }
        ul.legend { display: flex; gap: 1rem; list-style: none; padding: 0; margin: 0 0 .5rem; font-size: .875rem; }
        .swatch { display: inline-block; width: .8rem; height: .8rem; margin-right: .35rem; border-radius: 2px; vertical-align: -1px; }
        dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
        dl.stats dd { font-size: 1.5rem; }
        form.stack { display: grid; gap: .4rem; }
        form.filters { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin: 0 0 1rem; }
        form.filters label { display: block; font-size: .85rem; }
        form.inline { display: inline; margin: 0; }
        form.inline-form { display: flex; flex-wrap: wrap; gap: .4rem .75rem; align-items: center; margin: .75rem 0; }
        fieldset { border: 1px solid var(--line); border-radius: 6px; }
        input, select, button, textarea { font: inherit; padding: .35rem .5rem; border: 1px solid var(--field-line); border-radius: 4px; }
        input, select, textarea { background: var(--paper); color: var(--ink); }
        textarea { width: 100%; min-height: 8rem; font-family: ui-monospace, Menlo, monospace; }
        button { background: var(--accent); color: var(--on-accent); border-color: var(--accent); cursor: pointer; }
        button.danger { background: var(--danger); border-color: var(--danger); }
        button[disabled] { opacity: .6; cursor: not-allowed; }
        .badge { display: inline-block; margin-left: .4rem; padding: 0 .4rem; border-radius: 4px; font-size: .8rem; background: var(--wash); border: 1px solid var(--line); }
        .badge.danger { background: var(--alert); border-color: var(--danger); color: var(--danger); }
        .verdict-passed { color: var(--ok); font-weight: 600; }
        .verdict-failed { color: var(--danger); font-weight: 600; }
        .verdict-notChecked { color: var(--muted); }
        ins { background: var(--notice); text-decoration: none; } del { background: var(--alert); }
        .secret { background: var(--secret); border: 1px solid var(--secret-line); padding: .75rem; border-radius: 6px; }
        .pager { margin-top: 1rem; }
        ol.timeline { list-style: none; padding: 0; margin: 0; }
        ol.timeline li { padding: .3rem 0; border-bottom: 1px solid var(--line); }
        ol.timeline time { color: var(--muted); display: inline-block; min-width: 9rem; }
        p.qr svg { display: block; max-width: 100%; height: auto; }
        """

    static let javascript = """
        "use strict";
        (function () {
          // The erase button waits until the profile ID is typed exactly.
          document.querySelectorAll("input[data-must-equal]").forEach(function (input) {
            var button = input.form && input.form.querySelector("button[type=submit]");
            if (!button) { return; }
            var update = function () { button.disabled = input.value.trim() !== input.dataset.mustEqual; };
            input.addEventListener("input", update);
            update();
          });
          // Choosing a project switches to it.
          var project = document.getElementById("project");
          if (project && project.form) {
            project.addEventListener("change", function () { project.form.submit(); });
          }
          // Danger buttons ask once more.
          document.querySelectorAll("form button.danger").forEach(function (button) {
            button.form.addEventListener("submit", function (event) {
              if (event.submitter === button && !window.confirm(button.textContent + "?")) { event.preventDefault(); }
            });
          });
          // Times (last, so nothing above depends on it): relative ("5 minutes ago") by default with the exact UTC on hover, or UTC, or the
          // browser's local time; the choice is kept in this browser. Without the script, UTC.
          var times = document.querySelectorAll("time[datetime]");
          var who = document.querySelector("header.top .who");
          if (times.length && who) {
            var key = "tessera.console.times";
            var mode = "relative";
            try { mode = localStorage.getItem(key) || mode; } catch (error) { /* storage refused: the default */ }
            if (["relative", "utc", "local"].indexOf(mode) < 0) { mode = "relative"; }
            var units = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400], ["hour", 3600],
              ["minute", 60], ["second", 1]];
            var relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });
            var local = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric",
              hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
            var render = function () {
              times.forEach(function (time) {
                if (!time.dataset.utc) { time.dataset.utc = time.textContent; }
                var date = new Date(time.getAttribute("datetime"));
                time.title = time.dataset.utc;
                if (mode === "utc" || isNaN(date.getTime())) {
                  time.textContent = time.dataset.utc;
                } else if (mode === "local") {
                  time.textContent = local.format(date);
                } else {
                  var seconds = Math.round((date.getTime() - Date.now()) / 1000);
                  var unit = units.find(function (each) { return Math.abs(seconds) >= each[1]; }) || units[6];
                  time.textContent = relative.format(Math.round(seconds / unit[1]), unit[0]);
                }
              });
            };
            var label = document.createElement("label");
            label.textContent = "Times ";
            var select = document.createElement("select");
            select.id = "time-display";
            [["relative", "relative"], ["utc", "UTC"], ["local", "local time"]].forEach(function (option) {
              var element = document.createElement("option");
              element.value = option[0];
              element.textContent = option[1];
              select.appendChild(element);
            });
            select.value = mode;
            select.addEventListener("change", function () {
              mode = select.value;
              try { localStorage.setItem(key, mode); } catch (error) { /* kept for this page only */ }
              render();
            });
            label.appendChild(select);
            who.insertBefore(label, who.firstChild);
            render();
          }
        })();
        """
}
