#include "window_record.h"

#include <cstdio>

#include "numbers.h"

namespace jqtrace {
namespace {

bool time_member(const JsonValue& v, std::string_view key, int64_t* ns) {
  const JsonValue* m = v.member(key);
  return m && m->kind == JsonValue::Kind::number && parse_us_to_ns(m->text, ns) == NumberStatus::ok &&
         time_in_range(*ns);
}

std::string string_member(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.member(key);
  return m && m->kind == JsonValue::Kind::string ? m->text : std::string();
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
      out += code;
    }
    else out += c;
  }
  return out + "\"";
}

}  // namespace

WindowRecord interpret_window_record(const JsonValue& value) {
  WindowRecord r;
  if (value.kind != JsonValue::Kind::object) return r;
  if (!time_member(value, "lo_us", &r.lo_ns) || !time_member(value, "hi_us", &r.hi_ns) || r.lo_ns > r.hi_ns) return r;
  if (!time_member(value, "rebased_by_us", &r.rebased_by_ns)) r.rebased_by_ns = 0;
  r.source = string_member(value, "source");
  r.scope = string_member(value, "scope");
  if (r.scope.empty()) r.scope = "window";
  r.present = true;
  return r;
}

std::string window_record_json(const WindowRecord& record) {
  return "{\"version\":1,\"source\":" + json_quote(record.source) + ",\"scope\":" + json_quote(record.scope) +
         ",\"lo_us\":" + us_text(record.lo_ns) + ",\"hi_us\":" + us_text(record.hi_ns) +
         ",\"rebased_by_us\":" + us_text(record.rebased_by_ns) + "}";
}

}  // namespace jqtrace
