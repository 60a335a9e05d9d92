#pragma once
// A tiny JSON value tree for the few small subtrees jqtrace keeps whole (jobqueProfile).
// Events are never read into trees.
#include <string>
#include <utility>
#include <vector>

#include <cstdint>
#include <string_view>

namespace jqtrace {

struct JsonValue {
  enum class Kind { null, boolean, number, string, object, array };
  Kind kind = Kind::null;
  std::string text;  ///< number text, string value, "true"/"false"
  std::vector<std::pair<std::string, JsonValue>> members;  ///< objects, in file order
  std::vector<JsonValue> items;                             ///< arrays
  uint64_t offset = 0;  ///< where the value starts (about: scalars point just past)

  // Defined out of line, after the class is complete: the vectors hold JsonValue itself,
  // and clang (libstdc++ in C++20) refuses to instantiate their members before then.
  JsonValue();
  JsonValue(const JsonValue&);
  JsonValue(JsonValue&&) noexcept;
  JsonValue& operator=(const JsonValue&);
  JsonValue& operator=(JsonValue&&) noexcept;
  ~JsonValue();

  const JsonValue* member(std::string_view key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
};

/// Builds a JsonValue from SAX callbacks; refuses trees over a node budget.
class JsonValueBuilder {
 public:
  static constexpr std::size_t kMaxNodes = 1 << 20;
  /// Containers nested deeper are not kept (the tree would be freed recursively).
  static constexpr std::size_t kMaxDepth = 64;
  void start(bool object, uint64_t offset);
  void key(std::string_view k);
  void scalar(JsonValue::Kind kind, std::string_view text, uint64_t offset);
  /// Closes a container; true when that closed the root.
  bool end();
  bool too_big() const { return nodes_ > kMaxNodes || too_deep_; }
  bool too_deep() const { return too_deep_; }
  /// True when a key or string was not valid UTF-8 (or held a NUL) and was kept with
  /// \xHH escapes instead.
  bool had_bad_strings() const { return bad_strings_; }
  JsonValue take() { return std::move(root_); }

 private:
  void attach(JsonValue v);
  std::string repaired(std::string_view text);
  bool bad_strings_ = false;
  bool too_deep_ = false;
  std::size_t ignored_depth_ = 0;  ///< open containers below kMaxDepth, skipped
  std::vector<std::pair<std::string, JsonValue>> stack_;  // open containers, with their key
  std::string pending_key_;
  JsonValue root_;
  std::size_t nodes_ = 0;
};

/// A JSON string literal of text: quotes, backslashes and control characters escaped.
std::string json_quote(std::string_view text);

}  // namespace jqtrace
