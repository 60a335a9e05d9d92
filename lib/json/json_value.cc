#include "json_value.h"

#include <cstdio>

#include "utf8.h"

namespace jqtrace {

JsonValue::JsonValue() = default;
JsonValue::JsonValue(const JsonValue&) = default;
JsonValue::JsonValue(JsonValue&&) noexcept = default;
JsonValue& JsonValue::operator=(const JsonValue&) = default;
JsonValue& JsonValue::operator=(JsonValue&&) noexcept = default;
JsonValue::~JsonValue() = default;

void JsonValueBuilder::start(bool object, uint64_t offset) {
  if (ignored_depth_ || stack_.size() >= kMaxDepth) {  // deeper than any profile: not kept
    ++ignored_depth_;
    too_deep_ = true;
    return;
  }
  JsonValue v;
  v.kind = object ? JsonValue::Kind::object : JsonValue::Kind::array;
  v.offset = offset;
  stack_.emplace_back(std::move(pending_key_), std::move(v));
  pending_key_.clear();
  ++nodes_;
}

std::string JsonValueBuilder::repaired(std::string_view text) {
  if (clean_utf8(text)) return std::string(text);
  bad_strings_ = true;
  return with_escapes(text);
}

void JsonValueBuilder::key(std::string_view k) {
  if (!ignored_depth_) pending_key_ = repaired(k);
}

void JsonValueBuilder::scalar(JsonValue::Kind kind, std::string_view text, uint64_t offset) {
  if (ignored_depth_) return;
  JsonValue v;
  v.kind = kind;
  v.text = kind == JsonValue::Kind::string ? repaired(text) : std::string(text);
  v.offset = offset;
  ++nodes_;
  if (!too_big()) attach(std::move(v));
}

bool JsonValueBuilder::end() {
  if (ignored_depth_) {
    --ignored_depth_;
    return false;
  }
  auto [key, v] = std::move(stack_.back());
  stack_.pop_back();
  if (stack_.empty()) {
    root_ = std::move(v);
    return true;
  }
  pending_key_ = std::move(key);
  if (!too_big()) attach(std::move(v));
  return false;
}

void JsonValueBuilder::attach(JsonValue v) {
  JsonValue& parent = stack_.back().second;
  if (parent.kind == JsonValue::Kind::object) parent.members.emplace_back(std::move(pending_key_), std::move(v));
  else parent.items.push_back(std::move(v));
  pending_key_.clear();
}

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

}  // namespace jqtrace
