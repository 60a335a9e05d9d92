#include "html.h"

#include <fmt/core.h>

#include "render.h"

namespace jqtrace::result {
namespace {

constexpr const char* kStyle = R"(
:root{color-scheme:light dark;--fg:#1f2328;--bg:#ffffff;--muted:#57606a;--rule:#d0d7de;--stripe:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#8b949e;--rule:#30363d;--stripe:#161b22}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:24px;max-width:1700px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid var(--rule)}h3{font-size:14px;margin:14px 0 4px}
p.intro{color:var(--muted);margin:2px 0 10px}nav a{margin-right:12px}
dl.stats{display:flex;flex-wrap:wrap;gap:6px 22px;margin:8px 0}dl.stats div{display:flex;gap:6px}dt{color:var(--muted)}dd{margin:0;font-weight:600}
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
th,td{padding:2px 10px;border-bottom:1px solid var(--rule);text-align:left;white-space:nowrap}
th.num,td.num{text-align:right}div.wide{overflow-x:auto}tbody tr:nth-child(even){background:var(--stripe)}
th{cursor:pointer;user-select:none}svg{max-width:100%;height:auto;display:block;margin:6px 0}
svg.units .pline{stroke:var(--fg);stroke-dasharray:4 3}svg.units .axis{fill:var(--muted)}
svg.units .grid{stroke:var(--rule);stroke-width:.6}svg.units .baseline{stroke:var(--muted)}
.legend{display:flex;flex-wrap:wrap;gap:3px 16px;margin:2px 0 10px;font-size:13px}
.sw{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px;border-radius:2px;print-color-adjust:exact}
ol.slowest{column-width:290px;column-gap:24px;margin:2px 0 10px;padding-left:28px;font-variant-numeric:tabular-nums}
ul.gates{list-style:none;padding:0}ul.gates li::before{content:"\2713  ";color:#2da44e}ul.gates li.tripped::before{content:"\2717  ";color:#cf222e}
ul.warnings{border-left:4px solid #d29922;padding:6px 10px 6px 26px;background:var(--stripe)}
td.none{color:var(--muted);font-style:italic}.verdict-ok{color:#2da44e;font-weight:600}.verdict-bad{color:#cf222e;font-weight:600}
)";

// Sorting only: click a header to sort its table by that column (numbers by value).
constexpr const char* kScript = R"(
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){
var table=th.closest('table'),body=table.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th);
var up=th.dataset.dir!=='asc';th.dataset.dir=up?'asc':'desc';
var rows=Array.prototype.slice.call(body.rows);
rows.sort(function(a,b){var x=a.cells[i],y=b.cells[i];var u=x.dataset.v,v=y.dataset.v;
var r=(u!==undefined&&v!==undefined)?(parseFloat(u)-parseFloat(v)):x.textContent.localeCompare(y.textContent);return up?r:-r;});
rows.forEach(function(r){body.appendChild(r);});});});
)";

}  // namespace

std::string render_report_html(const std::string& title, const std::vector<ReportSection>& sections) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n";
  out += "<title>" + xml_escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head><body>\n";
  out += "<h1>" + xml_escape(title) + "</h1>\n<nav>";
  for (const ReportSection& s : sections) out += fmt::format("<a href=\"#{}\">{}</a>", s.id, xml_escape(s.heading));
  out += "</nav>\n";
  for (const ReportSection& s : sections) {
    out += fmt::format("<section id=\"{}\"><h2>{}</h2>\n", s.id, xml_escape(s.heading));
    if (!s.intro.empty()) out += "<p class=\"intro\">" + xml_escape(s.intro) + "</p>\n";
    out += s.body + "</section>\n";
  }
  out += std::string("<script>") + kScript + "</script>\n</body></html>\n";
  return out;
}

}  // namespace jqtrace::result
