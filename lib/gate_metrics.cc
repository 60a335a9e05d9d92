#include "gate_metrics.h"

#include <cmath>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

namespace jqtrace {
namespace {

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

constexpr std::string_view kStatsSchema = "jqtrace/stats/1";

}  // namespace

MetricSet stats_metrics(const RangeStats& s, const std::vector<KindSummary>& kinds) {
  MetricSet m;
  m.set("idle", s.idle_pct);
  m.set("parallelism", s.parallelism);
  m.set("publishes", static_cast<double>(s.publishes));
  m.set("events", static_cast<double>(s.events));
  m.set("busy", us(s.busy_ns));
  m.set("wait", us(s.wait_ns));
  for (const char* metric : {"share", "busy", "events", "p50", "p90", "p99", "max"}) m.declare(metric, "group");
  for (const GroupStats& g : s.groups) {
    m.set("share", g.name, g.share_pct);
    m.set("busy", g.name, us(g.busy_ns));
    m.set("events", g.name, static_cast<double>(g.events));
    m.set("p50", g.name, g.dur.p50 / 1000.0);
    m.set("p90", g.name, g.dur.p90 / 1000.0);
    m.set("p99", g.name, g.dur.p99 / 1000.0);
    m.set("max", g.name, g.dur.max / 1000.0);
  }
  for (const char* metric : {"unit_p50", "unit_p90", "unit_max", "units"}) m.declare(metric, "marker kind");
  for (const KindSummary& k : kinds) {
    m.set("unit_p50", k.kind, k.unit.p50 / 1000.0);
    m.set("unit_p90", k.kind, k.unit.p90 / 1000.0);
    m.set("unit_max", k.kind, k.unit.max / 1000.0);
    m.set("units", k.kind, static_cast<double>(k.count));
  }
  return m;
}

bool looks_like_stats_json(std::string_view head) {
  std::size_t schema = head.find("\"schema\"");
  if (schema == std::string_view::npos) return false;
  std::size_t value = head.find('"', head.find(':', schema));
  return value != std::string_view::npos && head.substr(value + 1, kStatsSchema.size()) == kStatsSchema;
}

bool read_stats_json(std::string_view text, BaselineShares* out, std::string* error) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());  // deep nesting must not overflow the stack
  if (doc.HasParseError()) {
    *error = std::string("not valid JSON: ") + rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
             std::to_string(doc.GetErrorOffset());
    return false;
  }
  if (!doc.IsObject() || !doc.HasMember("schema") || !doc["schema"].IsString() ||
      std::string_view(doc["schema"].GetString()) != kStatsSchema) {
    *error = "not a saved 'jqtrace stats --format json' (no \"schema\": \"jqtrace/stats/1\")";
    return false;
  }
  if (!doc.HasMember("by") || !doc["by"].IsString() || !doc.HasMember("groups") || !doc["groups"].IsArray()) {
    *error = "a stats JSON without \"by\" or \"groups\"";
    return false;
  }
  out->by = doc["by"].GetString();
  if (doc.HasMember("scope") && doc["scope"].IsString()) out->scope = doc["scope"].GetString();
  for (const auto& g : doc["groups"].GetArray()) {
    if (!g.IsObject() || !g.HasMember("name") || !g["name"].IsString() || !g.HasMember("share_pct") ||
        !g["share_pct"].IsNumber()) {
      *error = "a group without a \"name\" string and a \"share_pct\" number";
      return false;
    }
    out->groups.push_back({g["name"].GetString(), g["share_pct"].GetDouble()});
  }
  return true;
}

BaselineShares baseline_shares(const RangeStats& stats) {
  BaselineShares b;
  b.by = group_by_name(stats.by);
  for (const GroupStats& g : stats.groups) b.groups.push_back({g.name, g.share_pct});
  return b;
}

std::vector<ShareDelta> compare_shares(const RangeStats& now, const BaselineShares& baseline, double max_delta_pp) {
  std::vector<ShareDelta> out;
  auto in_baseline = [&](const std::string& name) -> const GroupShare* {
    for (const GroupShare& g : baseline.groups)
      if (g.name == name) return &g;
    return nullptr;
  };
  for (const GroupStats& g : now.groups) {
    const GroupShare* b = in_baseline(g.name);
    out.push_back({g.name, g.share_pct, b ? b->share_pct : 0.0, 0, false});
  }
  for (const GroupShare& b : baseline.groups) {
    bool seen = false;
    for (const GroupStats& g : now.groups) seen = seen || g.name == b.name;
    if (!seen) out.push_back({b.name, 0.0, b.share_pct, 0, false});
  }
  for (ShareDelta& d : out) {
    d.delta_pp = d.share_pct - d.baseline_share_pct;
    d.tripped = std::fabs(d.delta_pp) > max_delta_pp;
  }
  return out;
}

}  // namespace jqtrace
