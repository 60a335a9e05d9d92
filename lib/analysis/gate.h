#pragma once
// CI gates: `METRIC OP NUMBER` expressions checked against the numbers a command computed.
// A gate *trips* when its expression holds (`--fail-if 'share(ffn chain) > 40'` trips at
// 41.7). The grammar:
//
//   gate   := metric op number
//   metric := NAME | NAME '(' arg ')'        NAME: letters, digits, '_'
//   arg    := 'text' | "text" | text          bare text runs to the matching ')', trimmed
//   op     := '<' | '<=' | '>' | '>=' | '==' | '!='
//   number := a decimal number (sign, fraction, exponent allowed), then an optional '%'
//             (ignored: shares are already percentages)
//
// Which metrics exist is up to the command: it fills a MetricSet, and looking a gate up
// there gives its value or an error naming the closest valid metric or argument.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace jqtrace {

enum class CompareOp { lt, le, gt, ge, eq, ne };

struct Gate {
  std::string text;            ///< as written, trimmed
  std::string metric;          ///< "share", "idle", ...
  std::string arg;             ///< the group, kind or phase (quotes removed)
  bool has_arg = false;
  std::size_t metric_column = 1;  ///< 1-based, within text
  std::size_t arg_column = 0;     ///< 1-based, within text (0 without an argument)
  CompareOp op = CompareOp::gt;
  double threshold = 0;
  std::string threshold_text;  ///< the number as written, without '%'

  /// "share(ffn chain)", "idle".
  std::string metric_label() const;
};

/// Where a gate went wrong: a 1-based column within its text and what is wrong there.
struct GateError {
  std::size_t column = 1;
  std::string message;
};

bool parse_gate(std::string_view text, Gate* gate, GateError* error);

/// True when `value op threshold` holds.
bool holds(double value, CompareOp op, double threshold);

/// A metric known only within an interval (diff's change, a 95% interval): a gate on it
/// fails when the whole interval trips it, passes when none of it does, and otherwise
/// cannot judge (SPEC §2 "Significance", Gates).
struct MetricInterval {
  double lo = 0, hi = 0;
  /// The interval says something changed (0 is outside it): then a failure also needs the
  /// change significant in the gates' family (Holm over the rows the gates name).
  bool changed = false;
  bool significant = false;
  std::string family;  ///< "p_adj 0.003 over 2 gated rows": what significant stands on
};

/// A gate's outcome. Exact metrics only pass or fail.
enum class Verdict { pass, fail, cannot_judge };
const char* verdict_name(Verdict v);  ///< "pass", "fail", "cannot_judge"

/// The verdict of `value op threshold` for a value within *interval (null: exact).
Verdict judge(const Gate& gate, double value, const MetricInterval* interval);
const char* op_text(CompareOp op);

/// The numbers gates may name: plain metrics (idle, events) and metrics of an argument
/// (share(G) for every group G). Declare each metric of an argument with the noun its
/// argument is ("group", "marker kind", "phase") so messages can say what was unknown.
class MetricSet {
 public:
  void set(const std::string& metric, double value);
  void declare(const std::string& metric, const std::string& arg_noun);
  void set(const std::string& metric, const std::string& arg, double value);
  /// metric(arg) exists but has no trustworthy value: a gate naming it fails with why.
  void withhold(const std::string& metric, const std::string& arg, const std::string& why);
  /// What a gate on metric(arg) prints beside its value (diff: the interval and p).
  void explain(const std::string& metric, const std::string& arg, const std::string& detail);
  /// metric(arg) is known only within an interval (its value is set apart).
  void bound(const std::string& metric, const std::string& arg, const MetricInterval& interval);
  const MetricInterval* interval(const Gate& gate) const;
  std::string explanation(const Gate& gate) const;
  /// The gate's value, or false with an error at the unknown metric or argument (with
  /// the closest valid name when one is close).
  bool lookup(const Gate& gate, double* value, GateError* error) const;

 private:
  struct OfArgument {
    std::string noun;
    std::map<std::string, double> values;
    std::vector<std::string> names;  ///< in the order they were set (for suggestions)
    std::map<std::string, std::string> withheld;  ///< arg → why its value is not given
    std::map<std::string, std::string> details;   ///< arg → what its gates print beside the value
    std::map<std::string, MetricInterval> intervals;  ///< arg → the interval its value lies in
  };
  std::vector<std::string> metric_names() const;
  std::map<std::string, double> plain_;
  std::map<std::string, OfArgument> of_argument_;
};

struct GateResult {
  Gate gate;
  double value = 0;
  Verdict verdict = Verdict::pass;
  bool has_interval = false;
  MetricInterval interval;  ///< with has_interval
  /// The verdict cannot_judge turned pass or fail by --inconclusive (verdict holds the result).
  bool inconclusive = false;
  bool tripped() const { return verdict == Verdict::fail; }
  std::string detail;  ///< what the value stands on (diff: "shift +5.2% [+3.1%, +7.4%], p_adj 0.0012"), or ""
};

/// value with the fewest decimals (1 to 6; none for integers) that still reads on the
/// same side of the threshold: 41.7 for "> 40", but 40.04 rather than 40.0.
std::string format_gate_value(double value, const Gate& gate);

/// "share(ffn chain) = 41.7 > 40"; with an interval "slower(ffn chain) = 25.0 [18.2, 31.4] > 5"
std::string describe(const GateResult& result);

/// Why a gate could not judge: the interval straddles the threshold, or lies past it while
/// the change is not significant among the gated rows. "" for a judged gate.
std::string undecided_reason(const GateResult& result);

/// "[-20.0, 45.0]": an interval as gates print it.
std::string interval_text(const MetricInterval& interval);

/// What a gate's outcome says, as stderr and JUnit both print it: "gate failed: ...",
/// "gate failed (--inconclusive fail): ...: why", "cannot judge: ...: why", "gate passed by
/// --inconclusive pass: ...: why"; "" for a plain pass.
std::string outcome_line(const GateResult& result);

/// Gates of a gate file, one a line; '#' starts a comment; blank lines are skipped.
struct GateSource {
  Gate gate;
  std::string where;  ///< "FILE:LINE" or "--fail-if"
  std::size_t line = 0;
};

/// Parses a gate file's text; false with *error ("FILE:LINE:COL: message") at the first bad line.
bool parse_gate_file(const std::string& name, std::string_view text, std::vector<GateSource>* out,
                     std::string* error);

}  // namespace jqtrace
