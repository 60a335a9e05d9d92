#include "gate.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "suggest.h"

namespace jqtrace {
namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// A cursor over the expression; columns are 1-based positions in the text as given.
class GateParser {
 public:
  GateParser(std::string_view text, Gate* gate, GateError* error) : s_(text), gate_(gate), error_(error) {}

  bool parse() {
    skip_spaces();
    std::size_t start = i_;
    std::size_t end = s_.size();
    while (end > start && std::isspace(static_cast<unsigned char>(s_[end - 1]))) --end;
    gate_->text = std::string(s_.substr(start, end - start));
    return metric() && comparison() && number();
  }

 private:
  bool fail(std::size_t at, std::string message) {
    error_->column = at + 1;
    error_->message = std::move(message);
    return false;
  }
  void skip_spaces() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool at_end() const { return i_ >= s_.size(); }

  bool metric() {
    gate_->metric_column = i_ + 1;
    std::size_t start = i_;
    while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
    if (i_ == start) return fail(i_, at_end() ? "expected a metric, e.g. share(GROUP) > 40" : "expected a metric name");
    gate_->metric = std::string(s_.substr(start, i_ - start));
    skip_spaces();
    if (at_end() || s_[i_] != '(') return true;
    ++i_;
    skip_spaces();
    gate_->has_arg = true;
    gate_->arg_column = i_ + 1;
    return at_end() || (s_[i_] != '\'' && s_[i_] != '"') ? bare_argument() : quoted_argument();
  }

  bool quoted_argument() {
    char quote = s_[i_];
    std::size_t open = i_++;
    std::size_t close = s_.find(quote, i_);
    if (close == std::string_view::npos) return fail(open, std::string("unterminated ") + quote + " quote");
    gate_->arg = std::string(s_.substr(i_, close - i_));
    i_ = close + 1;
    skip_spaces();
    if (at_end() || s_[i_] != ')') return fail(i_, "expected ')' after the quoted name");
    ++i_;
    return true;
  }

  /// Bare text up to the ')' that closes the argument: names such as attn(4st) nest.
  bool bare_argument() {
    std::size_t start = i_;
    int depth = 0;
    for (; i_ < s_.size(); ++i_) {
      if (s_[i_] == '(') ++depth;
      else if (s_[i_] == ')' && depth-- == 0) break;
    }
    if (at_end()) return fail(start - 1, "missing ')'");
    std::size_t end = i_;
    while (end > start && std::isspace(static_cast<unsigned char>(s_[end - 1]))) --end;
    if (end == start) return fail(start, "empty name between ( and )");
    gate_->arg = std::string(s_.substr(start, end - start));
    ++i_;
    return true;
  }

  bool comparison() {
    skip_spaces();
    static const std::pair<const char*, CompareOp> kOps[] = {{"<=", CompareOp::le}, {">=", CompareOp::ge},
                                                             {"==", CompareOp::eq}, {"!=", CompareOp::ne},
                                                             {"<", CompareOp::lt},  {">", CompareOp::gt}};
    for (const auto& [text, op] : kOps)
      if (s_.substr(i_).substr(0, std::char_traits<char>::length(text)) == text) {
        gate_->op = op;
        i_ += std::char_traits<char>::length(text);
        return true;
      }
    if (!at_end() && s_[i_] == '=') return fail(i_, "use == to compare");
    return fail(i_, "expected one of < <= > >= == !=");
  }

  bool number() {
    skip_spaces();
    std::size_t start = i_;
    if (!at_end() && s_[i_] == '+') ++i_;  // from_chars takes no '+'
    double value = 0;
    auto [end, ec] = std::from_chars(s_.data() + i_, s_.data() + s_.size(), value);
    if (ec != std::errc() || !std::isfinite(value)) return fail(start, "expected a number");
    std::size_t after = static_cast<std::size_t>(end - s_.data());
    gate_->threshold = value;
    gate_->threshold_text = std::string(s_.substr(start, after - start));
    i_ = after;
    skip_spaces();
    if (!at_end() && s_[i_] == '%') ++i_;
    skip_spaces();
    if (!at_end()) return fail(i_, "unexpected '" + std::string(s_.substr(i_)) + "' after the number");
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  Gate* gate_;
  GateError* error_;
};

/// For |value| < 1e15 (larger ones print with shortest()): at most 16 digits, a sign, a
/// point and 6 decimals fit.
std::string with_decimals(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace

std::string Gate::metric_label() const { return has_arg ? metric + "(" + arg + ")" : metric; }

bool parse_gate(std::string_view text, Gate* gate, GateError* error) {
  *gate = Gate{};
  return GateParser(text, gate, error).parse();
}

bool holds(double value, CompareOp op, double threshold) {
  switch (op) {
    case CompareOp::lt: return value < threshold;
    case CompareOp::le: return value <= threshold;
    case CompareOp::gt: return value > threshold;
    case CompareOp::ge: return value >= threshold;
    case CompareOp::eq: return value == threshold;
    case CompareOp::ne: return value != threshold;
  }
  return false;
}

const char* op_text(CompareOp op) {
  switch (op) {
    case CompareOp::lt: return "<";
    case CompareOp::le: return "<=";
    case CompareOp::gt: return ">";
    case CompareOp::ge: return ">=";
    case CompareOp::eq: return "==";
    case CompareOp::ne: return "!=";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::fail: return "fail";
    case Verdict::cannot_judge: return "cannot_judge";
  }
  return "?";
}

namespace {

/// Whether every value of [lo, hi] trips the gate, and whether none does.
struct IntervalTruth {
  bool all = false, none = false;
};

IntervalTruth interval_truth(const Gate& gate, double lo, double hi) {
  double t = gate.threshold;
  switch (gate.op) {
    case CompareOp::eq: return {lo == t && hi == t, t < lo || t > hi};
    case CompareOp::ne: return {t < lo || t > hi, lo == t && hi == t};
    default:  // <, <=, >, >= are monotone: the ends decide for the whole interval
      return {holds(lo, gate.op, t) && holds(hi, gate.op, t), !holds(lo, gate.op, t) && !holds(hi, gate.op, t)};
  }
}

}  // namespace

Verdict judge(const Gate& gate, double value, const MetricInterval* interval) {
  if (!interval) return holds(value, gate.op, gate.threshold) ? Verdict::fail : Verdict::pass;
  IntervalTruth truth = interval_truth(gate, interval->lo, interval->hi);
  if (truth.none) return Verdict::pass;
  // A failure that says "it changed" must survive the other gates' chances of saying so too.
  if (truth.all && (!interval->changed || interval->significant)) return Verdict::fail;
  return Verdict::cannot_judge;
}

void MetricSet::set(const std::string& metric, double value) { plain_[metric] = value; }

void MetricSet::declare(const std::string& metric, const std::string& arg_noun) {
  of_argument_[metric].noun = arg_noun;
}

void MetricSet::set(const std::string& metric, const std::string& arg, double value) {
  OfArgument& m = of_argument_[metric];
  if (m.values.emplace(arg, value).second) m.names.push_back(arg);
  else m.values[arg] = value;
}

void MetricSet::withhold(const std::string& metric, const std::string& arg, const std::string& why) {
  OfArgument& m = of_argument_[metric];
  m.values.erase(arg);
  m.withheld[arg] = why;
}

void MetricSet::explain(const std::string& metric, const std::string& arg, const std::string& detail) {
  of_argument_[metric].details[arg] = detail;
}

void MetricSet::bound(const std::string& metric, const std::string& arg, const MetricInterval& interval) {
  of_argument_[metric].intervals[arg] = interval;
}

const MetricInterval* MetricSet::interval(const Gate& gate) const {
  auto m = of_argument_.find(gate.metric);
  if (!gate.has_arg || m == of_argument_.end()) return nullptr;
  auto i = m->second.intervals.find(gate.arg);
  return i == m->second.intervals.end() ? nullptr : &i->second;
}

std::string MetricSet::explanation(const Gate& gate) const {
  auto m = of_argument_.find(gate.metric);
  if (!gate.has_arg || m == of_argument_.end()) return "";
  auto d = m->second.details.find(gate.arg);
  return d == m->second.details.end() ? "" : d->second;
}

std::vector<std::string> MetricSet::metric_names() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : plain_) names.push_back(name);
  for (const auto& [name, m] : of_argument_) names.push_back(name);
  return names;
}

bool MetricSet::lookup(const Gate& gate, double* value, GateError* error) const {
  auto metric_error = [&](const std::string& what) {
    error->column = gate.metric_column;
    error->message = what;
    return false;
  };
  auto unknown_metric = [&](const std::string& what) {
    std::string near = closest_match(gate.metric, metric_names());
    return metric_error(near.empty() ? what : what + " (did you mean '" + near + "'?)");
  };
  if (!gate.has_arg) {
    auto it = plain_.find(gate.metric);
    if (it != plain_.end()) {
      *value = it->second;
      return true;
    }
    if (of_argument_.count(gate.metric)) {
      const std::string& noun = of_argument_.at(gate.metric).noun;
      return metric_error("'" + gate.metric + "' needs a " + noun + ": " + gate.metric + "(" + noun + ")");
    }
    return unknown_metric("unknown metric '" + gate.metric + "'");
  }
  auto it = of_argument_.find(gate.metric);
  if (it == of_argument_.end()) {
    if (plain_.count(gate.metric)) return metric_error("'" + gate.metric + "' takes no argument");
    return unknown_metric("unknown metric '" + gate.metric + "(...)'");
  }
  const OfArgument& m = it->second;
  auto found = m.values.find(gate.arg);
  if (found != m.values.end()) {
    *value = found->second;
    return true;
  }
  error->column = gate.arg_column;
  if (auto withheld = m.withheld.find(gate.arg); withheld != m.withheld.end()) {
    error->message = gate.metric_label() + ": " + withheld->second;
    return false;
  }
  error->message = "unknown " + m.noun + " '" + gate.arg + "'";
  std::vector<std::string> near = close_matches(gate.arg, m.names);
  if (!near.empty()) error->message += did_you_mean(near);
  else if (m.names.empty()) error->message += " (there are none in this scope)";
  return false;
}

/// The shortest %g form that reads back as value (1e+300, 1.2345678901234567e+20).
std::string shortest(double value) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string format_gate_value(double value, const Gate& gate) {
  if (!std::isfinite(value) || std::fabs(value) >= 1e15) return shortest(value);
  if (value == std::floor(value)) return with_decimals(value, 0);
  bool truth = holds(value, gate.op, gate.threshold);
  for (int decimals = 1; decimals < 6; ++decimals) {
    std::string text = with_decimals(value, decimals);
    double shown = std::stod(text);
    if (holds(shown, gate.op, gate.threshold) == truth && shown != gate.threshold) return text;
  }
  return with_decimals(value, 6);
}

std::string describe(const GateResult& r) {
  std::string value = format_gate_value(r.value, r.gate);
  if (r.has_interval) value += " " + interval_text(r.interval);
  return r.gate.metric_label() + " = " + value + " " + op_text(r.gate.op) + " " + r.gate.threshold_text +
         (r.detail.empty() ? "" : " (" + r.detail + ")");
}

std::string undecided_reason(const GateResult& r) {
  if (!r.has_interval || judge(r.gate, r.value, &r.interval) != Verdict::cannot_judge) return "";
  IntervalTruth truth = interval_truth(r.gate, r.interval.lo, r.interval.hi);
  std::string reason = "its 95% interval ";
  reason += interval_text(r.interval);
  if (!truth.all) return reason + " straddles " + r.gate.threshold_text;
  reason += " lies past " + r.gate.threshold_text;
  reason += " but the change is not significant among the gated rows (" + r.interval.family + ")";
  return reason;
}

std::string interval_text(const MetricInterval& interval) {
  std::string text = "[";
  text += with_decimals(interval.lo, 1);
  text += ", ";
  text += with_decimals(interval.hi, 1);
  return text + "]";
}

std::string outcome_line(const GateResult& r) {
  std::string line;
  switch (r.verdict) {
    case Verdict::cannot_judge: line = "cannot judge: "; break;
    case Verdict::fail: line = r.inconclusive ? "gate failed (--inconclusive fail): " : "gate failed: "; break;
    case Verdict::pass:
      if (!r.inconclusive) return "";
      line = "gate passed by --inconclusive pass: ";
      break;
  }
  line += describe(r);
  // An undecided gate (or one --inconclusive decided) says why it could not judge.
  if (r.verdict == Verdict::cannot_judge || r.inconclusive) line += ": " + undecided_reason(r);
  return line;
}

bool parse_gate_file(const std::string& name, std::string_view text, std::vector<GateSource>* out,
                     std::string* error) {
  std::size_t line_number = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    GateSource source;
    GateError e;
    if (!parse_gate(line, &source.gate, &e)) {
      *error = name + ":" + std::to_string(line_number) + ":" + std::to_string(e.column) + ": " + e.message;
      return false;
    }
    source.where = name + ":" + std::to_string(line_number);
    source.line = line_number;
    out->push_back(std::move(source));
  }
  return true;
}

}  // namespace jqtrace
