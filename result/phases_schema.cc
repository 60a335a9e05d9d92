#include "phases_schema.h"

#include "common_fields.h"

namespace jqtrace::result {

Document phases_document(const std::vector<TagStats>& tags, QuantileMethod quantiles,
                         const std::vector<GateResult>* gates) {
  Document doc;
  doc.schema = "jqtrace/phases/1";
  doc.add(Field("quantiles", Kind::text, std::string(quantile_method_name(quantiles))));
  Table tag_rows("tags");
  tag_rows.add_column(Column("tag", Kind::text));
  tag_rows.add_column(Column("bursts", Kind::integer));
  tag_rows.add_column(Column("rounds", Kind::integer));
  tag_rows.add_column(Column("total_ms", Kind::ratio));
  // The phases of every tag in one table (CSV writes it), nested under their tag in JSON.
  Table phases("phases");
  phases.nested = true;
  phases.add_column(Column("tag", Kind::text).rank(3));
  phases.add_column(Column("name", Kind::text).titled("phase"));
  phases.add_column(Column("parent", Kind::text).titled("of"));  // a sub-phase's share is of its parent
  phases.add_column(Column("ms", Kind::ratio));
  phases.add_column(Column("share_pct", Kind::percent).titled("share"));
  phases.add_column(Column("per_round_ms", Kind::distribution).titled("per-round").plain_numbers().rank(1));
  for (std::size_t k = 0; k < tags.size(); ++k) {
    const TagStats& t = tags[k];
    tag_rows.rows.push_back({t.tag, count(t.bursts), t.rounds, t.total_ms});
    for (const PhaseStats& ph : t.phases) {
      phases.rows.push_back({t.tag, ph.name, ph.parent.empty() ? Value{} : Value{ph.parent}, ph.ms, ph.share_pct,
                             ph.per_round_ms});
      phases.parent.push_back(k);
    }
  }
  doc.add(std::move(tag_rows));
  doc.add(std::move(phases));
  doc.delimited_table = 1;
  if (gates) doc.add(gates_table(*gates));
  return doc;
}

}  // namespace jqtrace::result
