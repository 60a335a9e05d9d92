#include "phases.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

namespace jqtrace {
namespace {

constexpr std::string_view kPerRound = "per-round ms:";

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

/// Where `[TAG] rounds=` starts in line, and the tag; npos when the line does not match.
std::size_t find_header(std::string_view line, std::string_view* tag) {
  for (std::size_t open = line.find('['); open != std::string_view::npos; open = line.find('[', open + 1)) {
    std::size_t close = line.find(']', open + 1);
    if (close == std::string_view::npos) return std::string_view::npos;
    std::string_view name = line.substr(open + 1, close - open - 1);
    bool plain = !name.empty();
    for (char c : name) plain = plain && !is_space(c) && c != '[';
    std::size_t at = close + 1;
    while (at < line.size() && is_space(line[at])) ++at;
    if (plain && line.substr(at, 7) == "rounds=") {
      *tag = name;
      return at;
    }
  }
  return std::string_view::npos;
}

struct Value {
  std::string name;
  std::string parent;
  double v = 0;
};

/// What one matching line says.
struct Burst {
  int64_t rounds = 0;
  std::optional<double> total_ms;
  std::vector<Value> totals, per_round;
};

/// Parses the name=value tokens of one section of a line. `offset` is where the section
/// starts in the line (for columns).
class SectionParser {
 public:
  SectionParser(std::string_view text, std::size_t offset, std::size_t line, PhaseLogError* error)
      : s_(text), offset_(offset), line_(line), error_(error) {}

  /// Header: name=number pairs; rounds= must be a whole number.
  bool header(Burst* burst) {
    bool have_rounds = false;
    while (next_token()) {
      Value v;
      std::size_t value_at = 0;
      if (!pair(&v, &value_at)) return false;
      if (v.name == "rounds") {
        if (v.v < 0 || v.v != std::floor(v.v) || v.v > 1e15) return fail(value_at, "rounds= must be a whole number");
        burst->rounds = static_cast<int64_t>(v.v);
        have_rounds = true;
      } else if (v.name == "total") {
        burst->total_ms = v.v;
      }
    }
    return have_rounds || fail(0, "no rounds=");
  }

  /// Phases, with `(name=value ...)` groups as sub-phases of the phase before them.
  bool phases(std::vector<Value>* out) {
    std::string last_top;
    while (next_token()) {
      if (s_[i_] == '(') {
        std::size_t open = i_++;
        std::size_t close = s_.find(')', i_);
        if (close == std::string_view::npos) return fail(open, "'(' without ')'");
        if (last_top.empty()) return fail(open, "sub-phases in '(...)' need a phase before them");
        std::string_view saved = s_;
        s_ = saved.substr(0, close);
        while (next_token()) {
          Value v;
          std::size_t value_at = 0;
          if (!pair(&v, &value_at)) return false;
          v.parent = last_top;
          out->push_back(std::move(v));
        }
        s_ = saved;
        i_ = close + 1;
        continue;
      }
      Value v;
      std::size_t value_at = 0;
      if (!pair(&v, &value_at)) return false;
      if (v.name == "total") continue;  // the section's own total, not a phase
      last_top = v.name;
      out->push_back(std::move(v));
    }
    return true;
  }

 private:
  bool fail(std::size_t at, std::string message) {
    error_->line = line_;
    error_->column = offset_ + at + 1;
    error_->message = std::move(message);
    return false;
  }
  /// Skips spaces; false at the end.
  bool next_token() {
    while (i_ < s_.size() && is_space(s_[i_])) ++i_;
    return i_ < s_.size();
  }
  /// name=number, the number optionally followed by "ms".
  bool pair(Value* v, std::size_t* value_at) {
    std::size_t start = i_;
    while (i_ < s_.size() && !is_space(s_[i_]) && s_[i_] != '=' && s_[i_] != '(' && s_[i_] != ')') ++i_;
    if (i_ == start || i_ >= s_.size() || s_[i_] != '=')
      return fail(start, "expected name=value, found '" + std::string(token_at(start)) + "'");
    v->name = std::string(s_.substr(start, i_ - start));
    *value_at = ++i_;
    std::size_t end = i_;
    while (end < s_.size() && !is_space(s_[end]) && s_[end] != '(' && s_[end] != ')') ++end;
    std::string_view text = s_.substr(i_, end - i_);
    if (text.size() > 2 && text.substr(text.size() - 2) == "ms") text.remove_suffix(2);
    double number = 0;
    auto [stop, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (text.empty() || ec != std::errc() || stop != text.data() + text.size() || !std::isfinite(number))
      return fail(*value_at, "malformed number '" + std::string(s_.substr(i_, end - i_)) + "' for " + v->name);
    v->v = number;
    i_ = end;
    return true;
  }
  std::string_view token_at(std::size_t at) const {
    std::size_t end = at;
    while (end < s_.size() && !is_space(s_[end])) ++end;
    return s_.substr(at, end - at);
  }

  std::string_view s_;
  std::size_t offset_;
  std::size_t line_;
  PhaseLogError* error_;
  std::size_t i_ = 0;
};

const Value* find(const std::vector<Value>& values, const std::string& name) {
  for (const Value& v : values)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

bool PhaseLog::add_line(std::string_view line, std::size_t line_number, PhaseLogError* error) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view tag;
  std::size_t at = find_header(line, &tag);
  if (at == std::string_view::npos) return true;
  Burst burst;
  for (std::size_t section = 0; at <= line.size(); ++section) {
    std::size_t bar = line.find('|', at);
    std::size_t end = bar == std::string_view::npos ? line.size() : bar;
    std::string_view text = line.substr(at, end - at);
    std::size_t lead = 0;
    while (lead < text.size() && is_space(text[lead])) ++lead;
    bool ok;
    if (section == 0) {
      ok = SectionParser(text, at, line_number, error).header(&burst);
    } else if (text.substr(lead, kPerRound.size()) == kPerRound) {
      std::size_t skip = lead + kPerRound.size();
      ok = SectionParser(text.substr(skip), at + skip, line_number, error).phases(&burst.per_round);
    } else {
      ok = SectionParser(text, at, line_number, error).phases(&burst.totals);
    }
    if (!ok) return false;
    if (bar == std::string_view::npos) break;
    at = bar + 1;
  }

  auto [it, added] = tags_.try_emplace(std::string(tag));
  if (added) order_.push_back(std::string(tag));
  TagSamples& t = it->second;
  int64_t rounds_total = 0;
  if (__builtin_add_overflow(t.rounds, burst.rounds, &rounds_total)) {  // a sum jqtrace cannot hold
    error->line = line_number;
    error->column = 1;
    error->message = "the rounds of tag '" + std::string(tag) + "' add up past " +
                     std::to_string(INT64_MAX) + "; no total is printed";
    return false;
  }
  ++t.bursts;
  ++bursts_;
  t.rounds = rounds_total;
  double rounds = static_cast<double>(burst.rounds);
  double top_level_ms = 0;
  auto add_phase = [&](const Value& v) {
    auto [p, first] = t.phases.try_emplace(v.name);
    if (first) {
      t.order.push_back(v.name);
      p->second.parent = v.parent;
    }
    const Value* total = find(burst.totals, v.name);
    const Value* per_round = find(burst.per_round, v.name);
    double ms = total ? total->v : per_round->v * rounds;
    p->second.ms += ms;
    if (per_round) p->second.per_round.push_back(per_round->v);
    else if (burst.rounds > 0) p->second.per_round.push_back(total->v / rounds);
    if (v.parent.empty()) top_level_ms += ms;
  };
  for (const Value& v : burst.totals) add_phase(v);
  for (const Value& v : burst.per_round)
    if (!find(burst.totals, v.name)) add_phase(v);
  t.total_ms += burst.total_ms ? *burst.total_ms : top_level_ms;
  return true;
}

std::vector<TagStats> PhaseLog::summarize(QuantileMethod method, const std::string& only_tag) const {
  std::vector<TagStats> out;
  for (const std::string& tag : order_) {
    if (!only_tag.empty() && tag != only_tag) continue;
    const TagSamples& t = tags_.at(tag);
    TagStats s;
    s.tag = tag;
    s.bursts = t.bursts;
    s.rounds = t.rounds;
    s.total_ms = t.total_ms;
    double top_level_ms = 0;
    for (const auto& [name, p] : t.phases)
      if (p.parent.empty()) top_level_ms += p.ms;
    for (const std::string& name : t.order) {
      const PhaseSamples& p = t.phases.at(name);
      PhaseStats ps;
      ps.name = name;
      ps.parent = p.parent;
      ps.ms = p.ms;
      double whole = p.parent.empty() ? top_level_ms : t.phases.at(p.parent).ms;
      ps.share_pct = whole > 0 ? 100.0 * p.ms / whole : 0.0;
      ps.per_round_ms = summarize_values(p.per_round, method);
      s.phases.push_back(std::move(ps));
    }
    out.push_back(std::move(s));
  }
  return out;
}

bool PhaseLog::has_tag(const std::string& tag) const { return tags_.count(tag) != 0; }

std::vector<std::string> PhaseLog::tags() const { return order_; }

MetricSet phase_metrics(const std::vector<TagStats>& tags) {
  MetricSet m;
  for (const char* metric : {"share", "ms", "p50"}) m.declare(metric, "phase");
  std::map<std::string, int> tags_with;
  for (const TagStats& t : tags)
    for (const PhaseStats& p : t.phases) ++tags_with[p.name];
  for (const TagStats& t : tags)
    for (const PhaseStats& p : t.phases) {
      for (const std::string& name : {t.tag + "/" + p.name, p.name}) {
        if (name == p.name && tags_with[p.name] > 1) continue;  // ambiguous: only TAG/PHASE
        m.set("share", name, p.share_pct);
        m.set("ms", name, p.ms);
        m.set("p50", name, p.per_round_ms.p50);
      }
    }
  if (tags.size() == 1) {
    m.set("bursts", static_cast<double>(tags[0].bursts));
    m.set("rounds", static_cast<double>(tags[0].rounds));
    m.set("total", tags[0].total_ms);
  }
  return m;
}

}  // namespace jqtrace
