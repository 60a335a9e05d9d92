#include "model.h"

namespace jqtrace::result {

const char* const kDistributionParts[7] = {"count", "mean", "p50", "p90", "p95", "p99", "max"};

std::vector<const Table*> Document::tables() const {
  std::vector<const Table*> out;
  for (const auto& item : items)
    if (const Table* t = std::get_if<Table>(&item)) out.push_back(t);
  return out;
}

const Row& Table::row(std::size_t r, Row& scratch) const {
  if (make_row) {
    make_row(r, scratch);
    return scratch;
  }
  return rows[r];
}

const Table* Document::delimited() const {
  std::vector<const Table*> all = tables();
  if (delimited_table >= 0) return static_cast<std::size_t>(delimited_table) < all.size() ? all[delimited_table] : nullptr;
  for (const Table* t : all)
    if (t->in_json && !t->nested) return t;
  return nullptr;
}

}  // namespace jqtrace::result
