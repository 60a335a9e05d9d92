// jqtrace-gen: writes synthetic jobque traces in the tracer's exact layout, of any size,
// for tests and benchmarks (SPEC §1.3): one event per line; lanes one after another,
// workers 0..N-1 then the caller last; within a lane completion order; publishes, chunks
// and stage_waits of multi-stage chains; token/layer/step markers on the caller; wakes
// after host pauses; fifo jobs; optionally lanes whose ring fills up and stops recording.
//
// The workload imitates LLM decode: per token an untagged embedding op, per layer a layer
// marker, attention (one 3-4 stage chain or three 1-stage ops), ple on even layers, FFN
// (a 2-stage chain, or every third layer router + MoE experts + shexp + park/reduce), then
// the classifier and a token marker. Memory stays flat at any size: the simulation is run
// once per lane with the same seed, and each run writes only its own lane's events.
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  int workers = 2;
  int layers = 16;
  uint64_t tokens = 0;         // 0: derived from --size-mb
  double size_mb = 1.0;
  uint64_t seed = 1;
  bool legacy = false;         // no jobqueProfile, no markers (the tracer before profiles)
  bool no_tags = false;        // publishes carry no tag (profiling off): with --legacy, names are guessed
  double tail_us = 0;          // a plain job this long after the last token marker (closers with a tail)
  std::vector<std::string> scales;  // "TAG=F": that tag's chunks cost F times as much (a known change)
  std::map<int64_t, double> scale;  // parsed from scales
  std::vector<std::string> rings;  // "LANE=N": that lane records at most N events
  /// How a preempted chunk (1% of them) costs more: "proportional", a multiple of its own
  /// time (so --scale scales the noise too); "additive", a delay of its own (0.2 to 4 ms)
  /// whatever the chunk's cost.
  std::string noise = "proportional";
  /// Every random draw is made whatever the durations (a lane's wake-up drawn even when it
  /// took no chunk) and the lanes (draws for 63 workers, whatever --workers says), so that a
  /// --scale or --workers twin differs from its seed's trace only by the change and what the
  /// runtime makes of it (whatif's validation). Off by default: the traces tests pin keep
  /// their numbers.
  bool fixed_stream = false;
  std::string output = "-";
};

constexpr int64_t kUs = 1000;  // ns
/// The most workers --fixed-stream draws for (see Simulation::lane_draws).
constexpr int kStreamWorkers = 63;

/// Writes events of one lane (the others are simulated but not written).
class LaneWriter {
 public:
  LaneWriter(std::FILE* out, int lane, uint64_t ring) : out_(out), lane_(lane), ring_(ring) {}

  void span(int lane, const char* name, int64_t ts, int64_t dur, int64_t stage, int64_t arg, int64_t chain) {
    ++events_total_;
    if (!take(lane)) return;
    char t[32], d[32];
    line("{\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%s,\"dur\":%s,\"name\":\"%s\",\"args\":{\"stage\":%lld,\"arg\":%lld,"
         "\"chain\":%lld}}",
         lane, us(ts, t), us(dur, d), name, static_cast<long long>(stage), static_cast<long long>(arg),
         static_cast<long long>(chain));
  }
  void marker(int lane, const char* name, int64_t ts, int64_t arg) {
    ++events_total_;
    if (!take(lane)) return;
    char t[32];
    line("{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":%d,\"ts\":%s,\"name\":\"%s\",\"args\":{\"arg\":%lld}}", lane,
         us(ts, t), name, static_cast<long long>(arg));
  }
  void thread_name(int lane, const char* role) {
    if (lane != lane_) return;
    line("{\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s %d\"}}", lane, role, lane);
  }
  uint64_t events_total() const { return events_total_; }
  /// Lines end with ",\n" except the file's very last event: the caller holds it back.
  void flush_pending(bool last) {
    if (!pending_.empty()) std::fprintf(out_, "%s%s\n", pending_.c_str(), last ? "" : ",");
    pending_.clear();
  }

 private:
  bool take(int lane) {
    if (lane != lane_) return false;
    if (ring_ && written_ >= ring_) return false;  // the ring is full: the lane stops recording
    ++written_;
    return true;
  }
  static const char* us(int64_t ns, char* buf) {
    std::snprintf(buf, 32, "%lld.%03lld", static_cast<long long>(ns / kUs), static_cast<long long>(ns % kUs));
    return buf;
  }
  template <typename... A>
  void line(const char* fmt, A... a) {
    flush_pending(false);
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, a...);
    pending_ = buf;
  }

  std::FILE* out_;
  int lane_;
  uint64_t ring_;
  uint64_t written_ = 0;
  uint64_t events_total_ = 0;
  std::string pending_;
};

/// The decode workload on W workers plus the caller, with a deterministic random stream.
class Simulation {
 public:
  Simulation(const Options& o, LaneWriter& w) : o_(o), w_(w), rng_(o.seed), free_(o.workers + 1, 0) {}

  void run(uint64_t tokens) {
    caller_ = o_.workers;
    for (int lane = 0; lane <= o_.workers; ++lane) w_.thread_name(lane, lane == caller_ ? "caller" : "worker");
    if (!o_.legacy) w_.marker(caller_, "step", 0, -1);
    t_ = 20 * kUs;
    for (uint64_t token = 0; token < tokens; ++token) decode_token(static_cast<int64_t>(token), token + 1 == tokens);
  }

 private:
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  /// --fixed-stream: a draw per lane is made for kStreamWorkers workers and the caller
  /// whatever the lanes, the caller's in the last slot, so that traces of other worker
  /// counts share every worker's draws: a twin with more workers differs by them alone.
  std::vector<int64_t> lane_draws(int64_t lo, int64_t hi) {
    std::vector<int64_t> drawn(kStreamWorkers + 1);
    for (int64_t& d : drawn) d = uniform(lo, hi);
    return drawn;
  }
  std::size_t slot(std::size_t lane) const {
    return static_cast<int>(lane) == caller_ ? kStreamWorkers : lane;
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  void decode_token(int64_t token, bool last) {
    chain(0, 1, {3}, 4 * kUs);  // untagged embedding op
    for (int layer = 0; layer < o_.layers; ++layer) {
      int64_t layer_ts = t_ + uniform(1, 5) * kUs;
      t_ += 6 * kUs;
      if (layer % 4 == 3) {
        for (int op = 0; op < 3; ++op) chain(2, 1, {3}, 5 * kUs);  // attn std
      } else if (chance(0.5)) {
        chain(1, 4, {6, 3, 3, 6}, 8 * kUs);
      } else {
        chain(1, 3, {6, 4, 6}, 8 * kUs);
      }
      // Written after the attention op though it happened before: completion order, as
      // the tracer's per-lane rings do, so readers cannot assume time order.
      if (!o_.legacy) w_.marker(caller_, "layer", layer_ts, layer);
      if (layer % 2 == 0) chain(8, 1, {3}, 3 * kUs);  // ple
      if (layer % 3 == 2) {
        chain(9, 1, {3}, 2 * kUs);              // router
        chain(6, 2, {8, 8}, 12 * kUs, 0.05);    // moe experts, some heavy chunks
        chain(7, 1, {3}, 6 * kUs);              // shexp
        chain(10, 1, {3}, 2 * kUs);             // park/reduce
      } else {
        chain(3, 2, {6, 3}, 10 * kUs);          // ffn chain
      }
      maybe_fifo_jobs();
    }
    chain(5, 1, {12}, 9 * kUs);  // classifier
    t_ += uniform(2, 10) * kUs;
    if (!o_.legacy) {
      w_.marker(caller_, "token", t_, token);
      if (token % 4 == 3) w_.marker(caller_, "step", t_ + 50, token);
    }
    if (last && o_.tail_us > 0)  // the trace runs on a little after the last token (closers with a tail)
      w_.span(0, "fifo_job", t_ + kUs, static_cast<int64_t>(o_.tail_us * kUs) - kUs, 0, 0, 0);
    if (chance(0.25) && !last) host_pause();  // the tracer writes a wake only when work resumes
  }

  /// One chain: a publish on the caller, then per stage the chunks spread over the lanes
  /// that are free first, a stage_wait on the caller for every stage, and on each worker
  /// that took chunks for every stage but the last.
  void chain(int64_t tag, int nstages, std::vector<int> chunks, int64_t cost, double heavy = 0.01) {
    if (auto it = o_.scale.find(tag); it != o_.scale.end()) cost = static_cast<int64_t>(static_cast<double>(cost) * it->second);
    int64_t id = next_chain_;
    next_chain_ += 2;
    int total = 0;
    for (int n : chunks) total += n;
    int64_t publish_dur = uniform(1 * kUs, 16 * kUs);
    if (o_.no_tags) tag = 0;
    w_.span(caller_, "publish", t_, publish_dur, nstages | (tag << 8), total, id);
    int64_t stage_start = t_ + publish_dur;
    for (int s = 0; s < nstages; ++s) stage_start = stage(id, s, nstages, chunks[s], cost, heavy, stage_start);
    t_ = stage_start;
  }

  int64_t stage(int64_t id, int s, int nstages, int n, int64_t cost, double heavy, int64_t start) {
    std::vector<int64_t> ready(free_.size());
    std::vector<bool> took(free_.size(), false);
    std::vector<int64_t> claims = o_.fixed_stream ? lane_draws(200, 2500) : std::vector<int64_t>{};
    for (std::size_t l = 0; l < free_.size(); ++l)
      ready[l] = static_cast<int>(l) == caller_
                     ? start
                     : std::max(free_[l], start + (o_.fixed_stream ? claims[slot(l)] : uniform(200, 2500)));
    int64_t stage_end = start;
    for (int c = 0; c < n; ++c) {
      std::size_t lane = 0;
      for (std::size_t l = 1; l < ready.size(); ++l)
        if (ready[l] < ready[lane]) lane = l;
      int64_t dur = cost * uniform(60, 160) / 100;
      if (chance(heavy)) {  // preempted chunk: a real scheduler tail
        if (o_.noise == "additive") dur += uniform(200, 4000) * kUs;
        else dur *= uniform(20, 400);
      }
      w_.span(static_cast<int>(lane), "chunk", ready[lane], dur, s, c, id);
      took[lane] = true;
      ready[lane] += dur + uniform(30, 300);
      stage_end = std::max(stage_end, ready[lane]);
    }
    bool last = s == nstages - 1;
    std::vector<int64_t> wakes = o_.fixed_stream ? lane_draws(10, 120) : std::vector<int64_t>{};
    for (std::size_t l = 0; l < ready.size(); ++l) {
      bool caller = static_cast<int>(l) == caller_;
      int64_t wake = o_.fixed_stream ? wakes[slot(l)] : 0;
      if (caller || (took[l] && !last)) {
        int64_t from = std::min(ready[l], stage_end);
        if (!o_.fixed_stream) wake = uniform(10, 120);
        w_.span(static_cast<int>(l), "stage_wait", from, stage_end - from + wake, s, 0, id);
        free_[l] = stage_end + 150;
      } else if (took[l]) {
        free_[l] = ready[l];
      }
    }
    return stage_end + uniform(100, 400);
  }

  void maybe_fifo_jobs() {
    for (int w = 0; w < (o_.fixed_stream ? kStreamWorkers : o_.workers); ++w) {
      bool job = chance(0.02);
      int64_t drawn = o_.fixed_stream ? uniform(10, 20) : 0;
      if (!job || w >= o_.workers) continue;
      int64_t start = std::max(free_[w], t_);
      int64_t dur = (o_.fixed_stream ? drawn : uniform(10, 20)) * kUs;
      w_.span(w, "fifo_job", start, dur, 0, 0, 0);
      free_[w] = start + dur;
    }
  }

  /// The host thread pauses; idle workers park and are woken when work resumes.
  void host_pause() {
    int64_t pause = uniform(500, 3000) * kUs;
    int64_t resume = t_ + pause;
    for (int w = 0; w < (o_.fixed_stream ? kStreamWorkers : o_.workers); ++w) {
      int64_t idle = uniform(50, 200);
      int64_t late = o_.fixed_stream ? uniform(5, 40) : 0;
      if (w >= o_.workers) continue;
      int64_t parked = std::max(free_[w], t_) + idle * kUs;
      if (parked >= resume) continue;
      int64_t woke = resume + (o_.fixed_stream ? late : uniform(5, 40)) * kUs;
      w_.span(w, "wake", parked, woke - parked, 0, 1, 0);
      free_[w] = woke;
    }
    t_ = resume;
  }

  const Options& o_;
  LaneWriter& w_;
  std::mt19937_64 rng_;
  std::vector<int64_t> free_;  // when each lane is next free (ns)
  int caller_ = 0;
  int64_t t_ = 0;              // the caller's clock (ns)
  int64_t next_chain_ = 26;
};

/// The profile's categories by id (1 on), with their colours: --scale names a tag by them.
struct CategoryName {
  const char* name;
  const char* color;
};
constexpr CategoryName kCategories[] = {
    {"attn chain", "#5E96DE"}, {"attn std", "#5E96DE"}, {"ffn chain", "#43B08A"}, {"ffn per-op", "#43B08A"},
    {"classifier", "#AC82E4"}, {"moe experts", "#E08563"}, {"shexp", "#C39536"},  {"ple", "#C39536"},
    {"router", "#4FC3D0"},     {"park/reduce", "#D678B4"},  {"deltanet", "#8385E8"}};

/// A decimal integer, the whole of text; nothing else (std::stoll threw, aborting the run).
std::optional<int64_t> integer_in(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) return std::nullopt;
  return v;
}

/// A category's tag from its id ("3") or its name ("ffn chain"); nothing for neither.
std::optional<int64_t> tag_named(const std::string& text) {
  if (std::optional<int64_t> id = integer_in(text)) return id;
  for (std::size_t k = 0; k < std::size(kCategories); ++k)
    if (text == kCategories[k].name) return static_cast<int64_t>(k + 1);
  return std::nullopt;
}

/// A finite number, the whole of text; nothing else.
std::optional<double> number_in(const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

void write_profile(std::FILE* out, int lanes) {
  std::fprintf(out, "],\"jobqueProfile\":{\"version\":1,\"lanes\":%d,\"categories\":[", lanes);
  for (std::size_t k = 0; k < std::size(kCategories); ++k)
    std::fprintf(out, "%s{\"id\":%zu,\"name\":\"%s\",\"color\":\"%s\"}", k ? "," : "", k + 1, kCategories[k].name,
                 kCategories[k].color);
  std::fputs("],\"markers\":[{\"id\":0,\"name\":\"token\"},{\"id\":1,\"name\":\"layer\"},{\"id\":2,\"name\":\"step\"}]}}\n",
             out);
}

/// Tokens needed for about size_mb of output: measured by simulating one token.
uint64_t tokens_for_size(const Options& o) {
  std::FILE* null = std::fopen("/dev/null", "w");
  LaneWriter counter(null, -1, 0);
  Simulation(o, counter).run(1);
  std::fclose(null);
  double bytes_per_token = static_cast<double>(counter.events_total()) * 112.0;
  return std::max<uint64_t>(1, static_cast<uint64_t>(o.size_mb * 1e6 / bytes_per_token));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Write a synthetic jobque trace in the tracer's layout", "jqtrace-gen"};
  app.add_option("--workers", o.workers, "Worker lanes (the caller lane comes last)")->check(CLI::Range(1, 256));
  app.add_option("--layers", o.layers, "Layers per token")->check(CLI::Range(1, 1000));
  app.add_option("--tokens", o.tokens, "Tokens to decode (default: enough for --size-mb)");
  app.add_option("--size-mb", o.size_mb, "Approximate output size in MB");
  app.add_option("--seed", o.seed, "Random seed");
  app.add_flag("--legacy", o.legacy, "Write the pre-profile format: no jobqueProfile, no markers");
  app.add_flag("--no-tags", o.no_tags, "Publishes carry no tag (with --legacy: nothing names the chains)");
  app.add_option("--tail-us", o.tail_us, "A plain job ending this many us after the last token marker")
      ->check(CLI::Range(1.0, 1e9));
  app.add_option("--scale", o.scales, "TAG=F: chunks of chains with that tag cost F times as much (a known change)");
  app.add_option("--ring", o.rings, "LANE=N: that lane's ring holds N events, then it stops recording");
  app.add_option("--noise", o.noise,
                 "How a preempted chunk costs more: proportional (a multiple of its time; default) or additive (a "
                 "delay of its own, 0.2 to 4 ms)")
      ->check(CLI::IsMember({"proportional", "additive"}));
  app.add_flag("--fixed-stream", o.fixed_stream,
               "Draw every random number whatever the durations and the lanes (up to 63 workers): a --scale or "
               "--workers twin differs only by the change");
  app.add_option("-o,--output", o.output, "Output file (- for stdout)");
  CLI11_PARSE(app, argc, argv);
  if (o.fixed_stream && o.workers > kStreamWorkers) {
    std::fprintf(stderr, "jqtrace-gen: --fixed-stream draws for up to %d workers, not %d\n", kStreamWorkers, o.workers);
    return 2;
  }

  std::map<int, uint64_t> ring;
  for (const std::string& r : o.rings) {
    auto eq = r.find('=');
    std::optional<int64_t> lane = eq == std::string::npos ? std::nullopt : integer_in(r.substr(0, eq));
    std::optional<int64_t> events = eq == std::string::npos ? std::nullopt : integer_in(r.substr(eq + 1));
    if (!lane || !events || *lane < 0 || *lane > 256 || *events < 0) {
      std::fprintf(stderr, "jqtrace-gen: --ring wants LANE=N (a lane 0-256, N events >= 0), got '%s'\n", r.c_str());
      return 2;
    }
    ring[static_cast<int>(*lane)] = static_cast<uint64_t>(*events);
  }
  for (const std::string& r : o.scales) {
    auto eq = r.find('=');
    std::optional<int64_t> tag = eq == std::string::npos ? std::nullopt : tag_named(r.substr(0, eq));
    std::optional<double> factor = eq == std::string::npos ? std::nullopt : number_in(r.substr(eq + 1));
    if (!tag || !factor || *factor < 0) {
      std::fprintf(stderr,
                   "jqtrace-gen: --scale wants TAG=F (TAG a category's id or name, such as 3 or 'ffn chain'; F a "
                   "factor >= 0), got '%s'\n",
                   r.c_str());
      return 2;
    }
    o.scale[*tag] = *factor;
  }
  uint64_t tokens = o.tokens ? o.tokens : tokens_for_size(o);
  std::FILE* out = o.output == "-" ? stdout : std::fopen(o.output.c_str(), "w");
  if (!out) {
    std::perror(o.output.c_str());
    return 1;
  }
  static char buffer[1 << 20];
  std::setvbuf(out, buffer, _IOFBF, sizeof buffer);
  std::fputs("{\"traceEvents\":[\n", out);
  for (int lane = 0; lane <= o.workers; ++lane) {
    LaneWriter writer(out, lane, ring.count(lane) ? ring[lane] : 0);
    Simulation(o, writer).run(tokens);
    writer.flush_pending(lane == o.workers);
  }
  if (o.legacy) std::fputs("]}\n", out);
  else write_profile(out, o.workers + 1);
  bool ok = std::fflush(out) == 0;
  if (out != stdout) ok = std::fclose(out) == 0 && ok;
  return ok ? 0 : 1;
}
