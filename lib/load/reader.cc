#include "reader.h"

#include <cstdio>
#include <cstring>

#include <rapidjson/error/error.h>
#include <rapidjson/reader.h>

#include "flat_map.h"
#include "json_value.h"
#include "numbers.h"
#include "utf8.h"

// RawNumber below relies on how 1.1.0 passes numbers in-situ; a newer RapidJSON needs a look.
static_assert(RAPIDJSON_MAJOR_VERSION == 1 && RAPIDJSON_MINOR_VERSION == 1 && RAPIDJSON_PATCH_VERSION == 0,
              "the in-situ number convention of TraceHandler::RawNumber is RapidJSON 1.1.0's");

namespace jqtrace {

namespace {
constexpr std::string_view kCutMark = "\u2026 [cut: ";
}  // namespace

std::string cut_name(std::string_view name) {
  if (name.size() <= kMaxNameBytes) return std::string(name);
  std::size_t keep = kMaxNameBytes - 64;  // room for the mark, within kMaxNameBytes
  // Not inside a UTF-8 sequence: back to the byte that starts one.
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) --keep;
  uint64_t hash = 14695981039346656037ull;  // FNV-1a of the whole name: two long names stay two
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char tail[64];
  std::snprintf(tail, sizeof tail, "%zu bytes, #%016llx]", name.size(), static_cast<unsigned long long>(hash));
  std::string out(name.substr(0, keep));
  out += kCutMark;
  out += tail;
  return out;
}

bool is_cut_name(std::string_view name) {
  return name.size() > kCutMark.size() + 20 && name.back() == ']' &&
         name.find(kCutMark, name.size() > 64 + kCutMark.size() ? name.size() - 64 - kCutMark.size() : 0) != std::string_view::npos;
}

namespace {

enum class State { start, root_object, root_value, events, event_key, event_value, args, args_value,
                   skip, profile, done };
enum class RootKey { trace_events, profile, window, other };
enum class Field { ph, name, cat, ts, dur, pid, tid, scope, args, other };
enum class ArgField { stage, arg, chain, name, view_name, view_cat, view_added, other };
enum class Scalar { null, boolean, number, string };

/// Keys are compared by length first, then bytes: no strings are built per event.
Field classify_field(const char* s, std::size_t n) {
  auto is = [&](const char* k, std::size_t kn) { return n == kn && std::memcmp(s, k, kn) == 0; };
  switch (n) {
    case 1: return s[0] == 's' ? Field::scope : Field::other;
    case 2:
      if (is("ph", 2)) return Field::ph;
      if (is("ts", 2)) return Field::ts;
      return Field::other;
    case 3:
      if (is("dur", 3)) return Field::dur;
      if (is("pid", 3)) return Field::pid;
      if (is("tid", 3)) return Field::tid;
      if (is("cat", 3)) return Field::cat;
      return Field::other;
    case 4:
      if (is("name", 4)) return Field::name;
      if (is("args", 4)) return Field::args;
      return Field::other;
    default: return Field::other;
  }
}

ArgField classify_arg(const char* s, std::size_t n) {
  if (n == 5 && std::memcmp(s, "stage", 5) == 0) return ArgField::stage;
  if (n == 3 && std::memcmp(s, "arg", 3) == 0) return ArgField::arg;
  if (n == 5 && std::memcmp(s, "chain", 5) == 0) return ArgField::chain;
  if (n == 4 && std::memcmp(s, "name", 4) == 0) return ArgField::name;
  // What `window --view` writes for the viewer and the reader undoes (window_view.h).
  if (n == 12 && std::memcmp(s, "jqtrace_name", 12) == 0) return ArgField::view_name;
  if (n == 11 && std::memcmp(s, "jqtrace_cat", 11) == 0) return ArgField::view_cat;
  if (n == 12 && (std::memcmp(s, "jqtrace_view", 12) == 0 || std::memcmp(s, "jqtrace_flow", 12) == 0))
    return ArgField::view_added;
  return ArgField::other;
}

/// GNU-style, lower-case wording of RapidJSON's parse errors.
const char* describe(rapidjson::ParseErrorCode code) {
  using namespace rapidjson;
  switch (code) {
    case kParseErrorDocumentEmpty: return "empty input: no JSON value";
    case kParseErrorDocumentRootNotSingular: return "unexpected text after the end of the trace";
    case kParseErrorValueInvalid: return "invalid value";
    case kParseErrorObjectMissName: return "missing a member name in object";
    case kParseErrorObjectMissColon: return "missing ':' after object member name";
    case kParseErrorObjectMissCommaOrCurlyBracket: return "missing ',' or '}' after object member";
    case kParseErrorArrayMissCommaOrSquareBracket: return "missing ',' or ']' after array element";
    case kParseErrorStringUnicodeEscapeInvalidHex: return "invalid hex digits in \\u escape";
    case kParseErrorStringUnicodeSurrogateInvalid: return "invalid surrogate pair in string";
    case kParseErrorStringEscapeInvalid: return "invalid escape character in string";
    case kParseErrorStringMissQuotationMark: return "missing closing quotation mark in string";
    case kParseErrorStringInvalidEncoding: return "invalid UTF-8 in string";
    case kParseErrorNumberTooBig: return "number too big";
    case kParseErrorNumberMissFraction: return "missing digits after the decimal point";
    case kParseErrorNumberMissExponent: return "missing digits in exponent";
    default: return "syntax error";
  }
}

/// How deep JSON may nest (objects and arrays together) before the read is refused.
constexpr uint64_t kMaxDepth = 1000;

class TraceHandler {
 public:
  TraceHandler(Source& src, EventSink& sink, Interner& names, DiagnosticSink* diags, const ReadOptions& options)
      : src_(src), sink_(sink), names_(names), diags_(diags), stop_at_(options.stop_at) {}

  // RapidJSON handler interface (numbers arrive as text: kParseNumbersAsStringsFlag).
  bool Null() { return scalar(Scalar::null, {}); }
  bool Bool(bool b) { return scalar(Scalar::boolean, b ? "true" : "false"); }
  bool Int(int) { return scalar(Scalar::number, {}); }
  bool Uint(unsigned) { return scalar(Scalar::number, {}); }
  bool Int64(int64_t) { return scalar(Scalar::number, {}); }
  bool Uint64(uint64_t) { return scalar(Scalar::number, {}); }
  bool Double(double) { return scalar(Scalar::number, {}); }
  // Numbers and strings inside an event are nearly every callback: handled before the
  // general state switch.
  // In-situ, RapidJSON 1.1.0 hands a number over as a pointer to where the stream stands
  // when it ends (ParseNumber's PutBegin on a stream it does not copy): its n bytes are
  // the ones just before. reader_test pins this.
  bool RawNumber(const char* end, rapidjson::SizeType n, bool) { return value(Scalar::number, {end - n, n}); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return value(Scalar::string, {s, n}); }
  bool StartObject() { return deeper() && start(true); }
  bool EndObject(rapidjson::SizeType) { return shallower() && end(); }
  bool StartArray() { return deeper() && start(false); }
  bool EndArray(rapidjson::SizeType) { return shallower() && end(); }
  bool Key(const char* s, rapidjson::SizeType n, bool) { return key(s, n); }

  State state() const { return state_; }
  Container container() const { return container_; }
  uint64_t events() const { return events_; }
  uint64_t view_events() const { return view_events_; }
  bool has_events_array() const { return has_events_array_; }
  const std::string& refusal() const { return refusal_; }
  std::string_view refusal_rule() const { return refusal_rule_; }
  uint64_t profile_start() const { return profile_start_; }
  uint64_t profile_end() const { return profile_end_; }
  ReadResult::Stop stop() const { return stop_; }

 private:
  /// Where the current container starts: StartObject/StartArray run just after the
  /// recursive parser takes its bracket.
  uint64_t here() const { return src_.Tell() - 1; }
  /// Just past the object that EndObject closes: the parser calls it after taking the '}'
  /// (then it is the byte just taken), except after a trailing comma, where it calls it
  /// before (then the byte just taken is the comma or a blank, and the '}' is next).
  uint64_t after_closing() const { return src_.Previous() == '}' ? src_.Tell() : src_.Tell() + 1; }
  /// Where a scalar starts: its handler runs after the value was read (a string with
  /// escapes is longer in the file than its text: then this points inside it).
  uint64_t value_start(Scalar kind, std::string_view text) const {
    uint64_t length = text.size() + (kind == Scalar::string ? 2 : 0);
    if (kind == Scalar::null) length = 4;
    if (kind == Scalar::boolean) length = text.size();
    uint64_t t = src_.Tell();
    return t >= length ? t - length : 0;
  }

  void report(std::string_view rule, std::string message, uint64_t offset) {
    if (diags_) diags_->report(make_diagnostic(rule, std::move(message), offset));
  }

  /// RapidJSON's recursive parser (a quarter faster than its iterative one) takes a few
  /// hundred bytes of stack a level: nesting is refused past kMaxDepth, long before any
  /// thread's stack could run out. No trace nests anywhere near it.
  bool deeper() {
    if (++depth_ <= kMaxDepth) return true;
    refusal_ = "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels (more than jqtrace reads)";
    refusal_rule_ = "too-deep";
    return false;
  }
  bool shallower() {
    --depth_;
    return true;
  }

  void skip_then(State after) {
    state_ = State::skip;
    skip_depth_ = 1;
    skip_return_ = after;
  }

  bool value(Scalar kind, std::string_view text) {
    if (state_ == State::event_value) {
      event_field(kind, text);
      state_ = State::event_key;
      return true;
    }
    if (state_ == State::args_value) {
      args_field(kind, text);
      state_ = State::args;
      return true;
    }
    return scalar(kind, text);
  }

  bool scalar(Scalar kind, std::string_view text) {
    switch (state_) {
      case State::skip: return true;
      case State::profile:
        profile_.scalar(kind == Scalar::number    ? JsonValue::Kind::number
                        : kind == Scalar::string  ? JsonValue::Kind::string
                        : kind == Scalar::boolean ? JsonValue::Kind::boolean
                                                  : JsonValue::Kind::null,
                        text, value_start(kind, text));
        return true;
      case State::start:
        refusal_ = "not a trace: the top-level JSON value is not an object or an array";
        return false;
      case State::root_value:
        if (root_key_ == RootKey::trace_events)
          report("trace-events-not-array", "traceEvents is not an array", value_start(kind, text));
        else if (root_key_ == RootKey::profile)
          report("profile-shape", "jobqueProfile is not an object", value_start(kind, text));
        state_ = State::root_object;
        return true;
      case State::events:
        report("event-not-object", "traceEvents element is not an object", value_start(kind, text));
        return true;
      case State::event_value:
        event_field(kind, text);
        state_ = State::event_key;
        return true;
      case State::args_value:
        args_field(kind, text);
        state_ = State::args;
        return true;
      default: return true;
    }
  }

  bool start(bool object) {
    switch (state_) {
      case State::skip: ++skip_depth_; return true;
      case State::profile: profile_.start(object, here()); return true;
      case State::start:
        container_ = object ? Container::object : Container::array;
        state_ = object ? State::root_object : State::events;
        has_events_array_ = !object;
        return true;
      case State::root_value:
        if (root_key_ == RootKey::trace_events && !object) {
          // A part of a file starts with a prefix that opens the events array (its first
          // byte is not the file's first): that array is the file's, already announced.
          if (src_.first_offset() == 0 || has_events_array_) sink_.on_root_member(EventSink::RootMember::events, here());
          has_events_array_ = true;
          state_ = State::events;
          return true;
        }
        if (root_key_ == RootKey::window && object) {  // kept as a small tree, like the profile
          profile_ = JsonValueBuilder{};
          profile_.start(true, here());
          reading_window_ = true;
          state_ = State::profile;
          return true;
        }
        if (root_key_ == RootKey::profile && object) {
          profile_start_ = here();
          sink_.on_root_member(EventSink::RootMember::profile, profile_start_);
          profile_ = JsonValueBuilder{};
          profile_.start(true, here());
          state_ = State::profile;
          return true;
        }
        if (root_key_ == RootKey::trace_events)
          report("trace-events-not-array", "traceEvents is not an array", here());
        else if (root_key_ == RootKey::profile)
          report("profile-shape", "jobqueProfile is not an object", here());
        skip_then(State::root_object);
        return true;
      case State::events:
        if (object && here() >= stop_at_) {  // a part's end: the next part starts here
          stop_ = here() == stop_at_ ? ReadResult::Stop::at_boundary : ReadResult::Stop::overshot;
          return false;
        }
        if (object) {
          begin_event();
          state_ = State::event_key;
          return true;
        }
        report("event-not-object", "traceEvents element is not an object", here());
        skip_then(State::events);
        return true;
      case State::event_value:
        if (object && field_ == Field::args) {
          again_if(ev_.has_args);
          ev_.has_args = true;
          state_ = State::args;
          return true;
        }
        mark_wrong_type();
        skip_then(State::event_key);
        return true;
      case State::args_value:
        ++ev_.args_non_numbers;
        if (arg_field_ == ArgField::stage) ev_.problems |= kStageBad;
        if (arg_field_ == ArgField::arg) ev_.problems |= kArgBad;
        if (arg_field_ == ArgField::chain) ev_.problems |= kChainBad;
        skip_then(State::args);
        return true;
      default: return true;
    }
  }

  bool end() {
    switch (state_) {
      case State::skip:
        if (--skip_depth_ == 0) state_ = skip_return_;
        return true;
      case State::profile:
        if (profile_.end()) finish_profile();
        return true;
      case State::root_object: state_ = State::done; return true;
      case State::events:
        state_ = container_ == Container::array ? State::done : State::root_object;
        return true;
      case State::event_key:
        state_ = State::events;
        if (__builtin_expect(ev_.view_added, 0)) {
          ++view_events_;
          return true;
        }
        if (__builtin_expect(ev_.view_name != Interner::kNone, 0)) {  // a --view span: its own name back
          ev_.name = ev_.view_name;
          ev_.cat = ev_.view_cat;
        }
        ++events_;
        ev_.end_offset = after_closing();
        sink_.on_event(ev_, names_);
        return true;
      case State::args: state_ = State::event_key; return true;
      default: return true;
    }
  }

  bool key(const char* s, std::size_t n) {
    switch (state_) {
      case State::skip: return true;
      case State::profile: profile_.key({s, n}); return true;
      case State::root_object:
        if (n == 11 && std::memcmp(s, "traceEvents", 11) == 0) root_key_ = RootKey::trace_events;
        else if (n == 13 && std::memcmp(s, "jobqueProfile", 13) == 0) root_key_ = RootKey::profile;
        else if (n == 13 && std::memcmp(s, "jqtraceWindow", 13) == 0) root_key_ = RootKey::window;
        else root_key_ = RootKey::other;
        state_ = State::root_value;
        return true;
      case State::event_key:
        field_ = classify_field(s, n);
        state_ = State::event_value;
        return true;
      case State::args:
        arg_field_ = classify_arg(s, n);
        state_ = State::args_value;
        return true;
      default: return true;
    }
  }

  /// A field the reader knows, given a second time in the event (its first value set
  /// what `already` tests): flagged, and like every JSON reader jqtrace knows, the last
  /// value counts. Tested on state the setter touches anyway: no work per key.
  void again_if(bool already) { ev_.problems |= already ? kDuplicateKey : 0u; }

  void begin_event() {
    ev_.reset();
    ev_.offset = here();

  }

  /// A container where a known field wanted a scalar.
  void mark_wrong_type() {
    switch (field_) {
      case Field::ph: ev_.problems |= kBadPh; break;
      case Field::name: ev_.problems |= kNameNotString; break;
      case Field::cat: ev_.problems |= kCatNotString; break;
      case Field::ts: ev_.problems |= kTsNotNumber; break;
      case Field::dur: ev_.problems |= kDurNotNumber; break;
      case Field::pid: ev_.problems |= kPidBad; break;
      case Field::tid: ev_.problems |= kTidBad; break;
      case Field::scope: ev_.problems |= kScopeBad; break;
      case Field::args: ev_.problems |= kArgsNotObject; break;
      case Field::other: break;
    }
  }

  void time_field(Scalar kind, std::string_view text, bool* has, int64_t* ns, uint32_t not_number,
                  uint32_t out_of_range) {
    if (kind != Scalar::number) {
      ev_.problems |= not_number;
      return;
    }
    if (parse_us_to_ns(text, ns) == NumberStatus::ok && time_in_range(*ns)) *has = true;
    else ev_.problems |= out_of_range;
  }

  /// The id of a name the model keeps, valid UTF-8 without NUL. Each distinct name is
  /// checked once, when the interner first sees it; one that is not clean is interned
  /// again with \xHH escapes in place of its bad bytes, and events naming it get that id and
  /// are flagged. The usual cost: a compare and an empty-map test.
  __attribute__((always_inline)) uint32_t intern_kept(std::string_view text) {
    if (__builtin_expect(text.size() > kMaxNameBytes, 0)) {
      cut_ = cut_name(text);
      text = cut_;
    }
    uint32_t id = names_.intern(text);
    if (id >= validated_names_) validate_new_names();
    if (__builtin_expect(repaired_ids_.size() != 0, 0)) {
      if (const uint32_t* repaired = repaired_ids_.find(id)) {
        ev_.problems |= kBadString;
        return *repaired;
      }
    }
    return id;
  }

  __attribute__((noinline)) void validate_new_names() {
    for (; validated_names_ < names_.size(); ++validated_names_) {
      std::string_view name = names_.view(validated_names_);
      if (clean_utf8(name)) continue;
      uint32_t raw = validated_names_;
      repaired_ids_[raw] = names_.intern(with_escapes(name));  // a later id, clean: checked in turn
    }
  }

  /// A string the model keeps outside the interner (args.name): as intern_kept does.
  std::string_view kept(std::string_view text) {
    if (text.size() > kMaxNameBytes) {
      cut_ = cut_name(text);
      text = cut_;
    }
    if (clean_utf8(text)) return text;
    ev_.problems |= kBadString;
    replaced_ = with_escapes(text);
    return replaced_;
  }

  void process_id(Scalar kind, std::string_view text, ProcessId* id, uint32_t bad) {
    if (kind == Scalar::string) {
      id->present = true;
      id->is_string = true;
      id->text = intern_kept(text);
    } else if (kind == Scalar::number && parse_integer(text, &id->number) == NumberStatus::ok) {
      id->present = true;
    } else {
      ev_.problems |= bad;
    }
  }

  void event_field(Scalar kind, std::string_view text) {
    switch (field_) {
      case Field::ph:
        again_if(ev_.ph != 0);
        if (kind == Scalar::string && text.size() == 1) ev_.ph = text[0];
        else ev_.problems |= kBadPh;
        break;
      case Field::name:
        again_if(ev_.name != Interner::kNone);
        if (kind == Scalar::string) ev_.name = intern_kept(text);
        else ev_.problems |= kNameNotString;
        break;
      case Field::cat:
        again_if(ev_.cat != Interner::kNone);
        if (kind == Scalar::string) ev_.cat = intern_kept(text);
        else ev_.problems |= kCatNotString;
        break;
      case Field::ts:
        again_if(ev_.has_ts);
        time_field(kind, text, &ev_.has_ts, &ev_.ts_ns, kTsNotNumber, kTsOutOfRange); break;
      case Field::dur:
        again_if(ev_.has_dur);
        time_field(kind, text, &ev_.has_dur, &ev_.dur_ns, kDurNotNumber, kDurOutOfRange); break;
      case Field::pid:
        again_if(ev_.pid.present);
        process_id(kind, text, &ev_.pid, kPidBad); break;
      case Field::tid:
        again_if(ev_.tid.present);
        process_id(kind, text, &ev_.tid, kTidBad); break;
      case Field::scope:
        again_if(ev_.scope != 0);
        if (kind == Scalar::string && text.size() == 1) ev_.scope = text[0];
        else ev_.problems |= kScopeBad;
        break;
      case Field::args: ev_.problems |= kArgsNotObject; break;
      case Field::other: break;
    }
  }

  void int_arg(Scalar kind, std::string_view text, bool* has, int64_t* value, uint32_t bad) {
    if (kind == Scalar::number && parse_integer(text, value) == NumberStatus::ok) *has = true;
    else ev_.problems |= bad;
  }

  void args_field(Scalar kind, std::string_view text) {
    if (kind == Scalar::number) ++ev_.args_numbers;
    else ++ev_.args_non_numbers;
    switch (arg_field_) {
      case ArgField::stage:
        again_if(ev_.has_stage);
        int_arg(kind, text, &ev_.has_stage, &ev_.stage, kStageBad); break;
      case ArgField::arg:
        again_if(ev_.has_arg);
        int_arg(kind, text, &ev_.has_arg, &ev_.arg, kArgBad); break;
      case ArgField::chain:
        again_if(ev_.has_chain);
        int_arg(kind, text, &ev_.has_chain, &ev_.chain, kChainBad); break;
      case ArgField::name:
        if (kind == Scalar::string) ev_.arg_name.assign(kept(text));
        break;
      case ArgField::view_name:
        if (kind == Scalar::string) ev_.view_name = intern_kept(text);
        break;
      case ArgField::view_cat:
        if (kind == Scalar::string) ev_.view_cat = intern_kept(text);
        break;
      case ArgField::view_added: ev_.view_added = true; break;
      case ArgField::other: break;
    }
  }

  void finish_profile() {
    state_ = State::root_object;
    if (profile_.had_bad_strings())
      report("bad-string", std::string(reading_window_ ? "jqtraceWindow" : "jobqueProfile") +
                               " holds a string that is not valid UTF-8 or has a NUL; read with \\xHH escapes in place of its bad bytes",
             reading_window_ ? Diagnostic::kNoOffset : profile_start_);
    if (reading_window_) {
      reading_window_ = false;
      if (!profile_.too_big()) sink_.on_window_record(interpret_window_record(profile_.take()));
      return;
    }
    profile_end_ = after_closing();
    if (profile_.too_big()) {
      std::string why = profile_.too_deep() ? "nested too deeply (over 64 levels)" : "too large (over a million values)";
      report("profile-shape", "jobqueProfile is " + why, Diagnostic::kNoOffset);
      // Every command says so (a warning and the attribution): its tags stay numbers
      // rather than take names the trace never gave them.
      JobqueProfile unread;
      unread.present = true;
      unread.unread = why;
      sink_.on_profile(unread);
      return;
    }
    JobqueProfile profile = interpret_profile(profile_.take(), diags_);
    // A marker kind is an instant's name: kept as the instants' names are (cut past
    // kMaxNameBytes, bad bytes escaped), or a kind with a long name would match none of
    // its own markers.
    for (ProfileMarker& m : profile.markers) m.name = as_kept_name(m.name);
    sink_.on_profile(profile);
  }

  /// A name as intern_kept keeps it (cut, then escaped when not clean UTF-8).
  static std::string as_kept_name(std::string_view text) {
    std::string name = text.size() > kMaxNameBytes ? cut_name(text) : std::string(text);
    return clean_utf8(name) ? name : with_escapes(name);
  }

  Source& src_;
  EventSink& sink_;
  Interner& names_;
  DiagnosticSink* diags_;
  uint64_t stop_at_;
  ReadResult::Stop stop_ = ReadResult::Stop::not_reached;

  State state_ = State::start;
  State skip_return_ = State::start;
  uint64_t skip_depth_ = 0;
  uint64_t depth_ = 0;
  Container container_ = Container::unknown;
  RootKey root_key_ = RootKey::other;
  Field field_ = Field::other;
  ArgField arg_field_ = ArgField::other;
  RawEvent ev_;
  std::string replaced_;  ///< kept()'s repaired copy of the last bad string
  std::string cut_;       ///< the last name cut to kMaxNameBytes
  uint32_t validated_names_ = 0;  ///< names_ ids below this were checked by intern_kept
  FlatMap<uint32_t> repaired_ids_;  ///< a name not clean -> its repaired id
  JsonValueBuilder profile_;  ///< the jobqueProfile's tree, or the jqtraceWindow's
  bool reading_window_ = false;
  uint64_t events_ = 0;
  uint64_t view_events_ = 0;  ///< events window --view added (args.jqtrace_view), dropped
  bool has_events_array_ = false;
  std::string refusal_;
  std::string_view refusal_rule_ = "not-a-trace";
  uint64_t profile_start_ = 0, profile_end_ = 0;
};

/// Between two events of the events array (or before the first): nothing half-read.
bool between_events(State s) { return s == State::events; }

}  // namespace

ReadResult read_trace(Source& source, EventSink& sink, Interner& names, DiagnosticSink* diags,
                      const ReadOptions& options) {
  source.set_max_token_bytes(options.max_string_bytes);
  TraceHandler handler(source, sink, names, diags, options);
  rapidjson::Reader reader;
  // Recursive, not kParseIterativeFlag: the iterative parser costs a quarter more on
  // traces; TraceHandler bounds the nesting (and so the stack) instead.
  constexpr unsigned kFlags =
      rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseTrailingCommasFlag;
  rapidjson::ParseResult parsed = reader.Parse<kFlags>(source, handler);

  ReadResult r;
  r.container = handler.container();
  r.events = handler.events();
  r.view_events = handler.view_events();
  r.bytes = source.text_bytes();
  r.has_events_array = handler.has_events_array();
  r.profile_offset = handler.profile_start();
  r.profile_end = handler.profile_end();
  r.stop = handler.stop();
  r.stream_cut = source.cut_short();
  r.compression = source.compression();
  if (r.stop != ReadResult::Stop::not_reached) return r;  // a part's planned end, or a wrong guess
  auto fail = [&](std::string message, uint64_t offset, std::string_view rule = "json-syntax") {
    r.status = ReadStatus::input_error;
    r.rule = rule;
    r.message = std::move(message);
    r.offset = offset;
    if (offset != Diagnostic::kNoOffset) r.position = source.locate(offset);  // the error path only
    return r;
  };
  constexpr uint64_t kNowhere = Diagnostic::kNoOffset;

  if (source.token_too_long_at() != UINT64_MAX) return fail(source.read_error(), source.token_too_long_at());
  if (!source.read_error().empty()) return fail(source.read_error(), kNowhere, "unreadable");
  // The parser stopped at a NUL byte, or took one for the end of the text (what follows
  // it would be lost): either way the text is not JSON there.
  if (source.first_nul() != UINT64_MAX && (!parsed.IsError() || source.first_nul() <= parsed.Offset())) {
    uint64_t nul = source.first_nul();
    return fail("NUL byte at offset " + std::to_string(nul) + " (not JSON text)", nul);
  }
  if (parsed.IsError()) {
    uint64_t offset = parsed.Offset();
    if (parsed.Code() == rapidjson::kParseErrorTermination) return fail(handler.refusal(), offset, handler.refusal_rule());
    if (handler.state() == State::start) {
      if (parsed.Code() == rapidjson::kParseErrorDocumentEmpty) {
        if (r.stream_cut)
          return fail(std::string("the ") + compression_name(r.compression) +
                          " stream ends before its first byte of text (the file is cut short)",
                      kNowhere, "unreadable");
        return fail("empty input: no JSON value", kNowhere, "not-a-trace");
      }
      return fail(std::string("not JSON: ") + describe(parsed.Code()), offset);
    }
    bool ran_out = source.at_end() && offset >= source.text_bytes();
    if (!ran_out || handler.state() == State::done) return fail(describe(parsed.Code()), offset);
    if (r.container == Container::array && between_events(handler.state())) {
      r.array_unterminated = true;
    } else {
      r.status = ReadStatus::truncated;
      r.offset = offset;
    }
  }
  if (r.stream_cut && r.status == ReadStatus::ok) {  // complete JSON, but the stream's end (and check) is missing
    r.status = ReadStatus::truncated;
    r.offset = r.bytes;
  }
  if (r.container == Container::object && !r.has_events_array && r.status == ReadStatus::ok) {
    // A complete object with no traceEvents array is some other JSON document.
    return fail("not a trace: no \"traceEvents\" array", kNowhere, "not-a-trace");
  }
  return r;
}

}  // namespace jqtrace
