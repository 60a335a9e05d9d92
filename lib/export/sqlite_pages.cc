#include "sqlite_pages.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace jqtrace::sqlite_file {
namespace {

// Page types (the first byte of a B-tree page).
constexpr uint8_t kIndexInterior = 0x02, kTableInterior = 0x05, kIndexLeaf = 0x0a, kTableLeaf = 0x0d;
constexpr std::size_t kLeafHeader = 8, kInteriorHeader = 12;
// The page holding the bytes at 1 GiB: SQLite locks them, so it is never a B-tree page.
constexpr uint64_t kLockByteOffset = 0x40000000;

/// SQLite's varint: big-endian groups of 7 bits, the high bit set on all but the last;
/// the ninth byte, if any, holds 8 bits.
std::size_t put_varint(uint8_t* out, uint64_t v) {
  if (v < 0x80) {  // a serial type, a header's or a payload's size: nearly always one byte
    out[0] = static_cast<uint8_t>(v);
    return 1;
  }
  if (v > 0x00ffffffffffffffULL) {
    out[8] = static_cast<uint8_t>(v);
    v >>= 8;
    for (int k = 7; k >= 0; --k, v >>= 7) out[k] = static_cast<uint8_t>((v & 0x7f) | 0x80);
    return 9;
  }
  uint8_t reversed[9];
  std::size_t n = 0;
  do {
    reversed[n++] = static_cast<uint8_t>((v & 0x7f) | 0x80);
    v >>= 7;
  } while (v);
  reversed[0] &= 0x7f;
  for (std::size_t k = 0; k < n; ++k) out[k] = reversed[n - 1 - k];
  return n;
}

std::size_t varint_size(uint64_t v) {
  std::size_t n = 1;
  for (; n < 9 && v >= 0x80; ++n) v >>= 7;  // (the ninth byte holds 8 bits: the rest fits)
  return n;
}

void append_varint(std::string* out, uint64_t v) {
  uint8_t bytes[9];
  out->append(reinterpret_cast<const char*>(bytes), put_varint(bytes, v));
}

/// Reads a varint at p (within end); its value and length.
std::size_t get_varint(const uint8_t* p, const uint8_t* end, uint64_t* v) {
  if (p < end && *p < 0x80) {  // a serial type below 128: nearly every one
    *v = *p;
    return 1;
  }
  uint64_t value = 0;
  for (std::size_t k = 0; k < 8 && p + k < end; ++k) {
    value = (value << 7) | (p[k] & 0x7f);
    if (!(p[k] & 0x80)) {
      *v = value;
      return k + 1;
    }
  }
  if (p + 8 >= end) {
    *v = value;
    return static_cast<std::size_t>(end - p);
  }
  *v = (value << 8) | p[8];
  return 9;
}

void put_u16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put_u32(uint8_t* p, uint32_t v) {
  for (int k = 3; k >= 0; --k, v >>= 8) p[k] = static_cast<uint8_t>(v);
}
uint32_t get_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

/// One value of an encoded record, decoded for comparison.
struct Decoded {
  int cls = 0;  // 0 NULL, 1 number, 2 text, 3 blob
  bool is_real = false;
  int64_t integer = 0;
  double real = 0;
  std::string_view bytes;
};

double real_at(const uint8_t* body) {
  uint64_t bits = 0;
  for (int k = 0; k < 8; ++k) bits = (bits << 8) | body[k];
  double real = 0;
  std::memcpy(&real, &bits, 8);
  return real;
}

Decoded decode(uint64_t serial, const uint8_t* body) {
  Decoded d;
  if (serial == 0) return d;
  d.cls = 1;
  if (serial == 7) {
    d.real = real_at(body);
    d.is_real = true;
  } else if (serial == 8 || serial == 9) {
    d.integer = static_cast<int64_t>(serial - 8);
  } else if (serial <= 6) {
    static constexpr uint8_t kBytes[] = {0, 1, 2, 3, 4, 6, 8};
    std::size_t n = kBytes[serial];
    uint64_t v = body[0] & 0x80 ? ~uint64_t{0} : 0;  // sign-extended
    for (std::size_t k = 0; k < n; ++k) v = (v << 8) | body[k];
    d.integer = static_cast<int64_t>(v);
  } else {
    d.cls = serial % 2 ? 2 : 3;
    d.bytes = {reinterpret_cast<const char*>(body), static_cast<std::size_t>((serial - 12) / 2)};
  }
  return d;
}

std::size_t body_size(uint64_t serial) {
  static constexpr uint8_t kBytes[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
  return serial < 10 ? kBytes[serial] : static_cast<std::size_t>((serial - 12) / 2);
}

int sign(double v) { return v < 0 ? -1 : v > 0; }

/// Two values of one serial type (so of one size) whose bytes first differ at byte k:
/// integers (big-endian) by their first byte signed, then unsigned; text (BINARY) and
/// blobs by that byte; reals by value (0 for -0.0 against 0.0: the next column decides).
int compare_same_type(uint64_t serial, const uint8_t* a, const uint8_t* b, std::size_t k) {
  if (serial >= 1 && serial <= 6 && k == 0) return static_cast<int8_t>(a[0]) < static_cast<int8_t>(b[0]) ? -1 : 1;
  if (serial == 7) return sign(real_at(a) - real_at(b));
  return a[k] < b[k] ? -1 : 1;
}

/// An integer against a double as SQLite orders them: by value.
int compare_numbers(const Decoded& a, const Decoded& b) {
  if (!a.is_real && !b.is_real) return a.integer < b.integer ? -1 : a.integer > b.integer;
  if (a.is_real && b.is_real) return sign(a.real - b.real);
  if (a.is_real) return -compare_numbers(b, a);
  // a integer, b real: compare exactly (a double beyond ±2^63 is past every integer).
  if (b.real >= 9223372036854775808.0) return -1;
  if (b.real < -9223372036854775808.0) return 1;
  double whole = std::floor(b.real);
  auto w = static_cast<int64_t>(whole);
  if (a.integer != w) return a.integer < w ? -1 : 1;
  return whole < b.real ? -1 : 0;
}

int compare_values(const Decoded& a, const Decoded& b) {
  if (a.cls != b.cls) return a.cls < b.cls ? -1 : 1;
  if (a.cls == 0) return 0;
  if (a.cls == 1) return compare_numbers(a, b);
  int c = std::memcmp(a.bytes.data(), b.bytes.data(), std::min(a.bytes.size(), b.bytes.size()));
  if (c) return c < 0 ? -1 : 1;
  return a.bytes.size() < b.bytes.size() ? -1 : a.bytes.size() > b.bytes.size();
}

}  // namespace

Record& Record::t(std::string_view v) {
  uint8_t serial[9];
  std::size_t n = put_varint(serial, 2 * uint64_t{v.size()} + 13);
  for (std::size_t k = 0; k < n; ++k) type(serial[k]);
  if (!v.empty()) std::memcpy(body(v.size()), v.data(), v.size());
  return *this;
}

std::string_view Record::encode() {
  // The header's size counts its own varint.
  std::size_t header = types_used_ + 1;
  if (header >= 0x80)
    while (varint_size(header) + types_used_ != header) header = types_used_ + varint_size(header);
  const std::size_t size = header + body_used_;
  if (bytes_.size() < size) bytes_.resize(std::max(2 * bytes_.size(), size));
  auto out = reinterpret_cast<uint8_t*>(bytes_.data());
  std::size_t at = put_varint(out, header);
  std::memcpy(out + at, types_.data(), types_used_);
  if (body_used_) std::memcpy(out + header, body_.data(), body_used_);
  types_used_ = body_used_ = 0;
  return {bytes_.data(), size};
}

int compare_records(std::string_view a, std::string_view b) {
  auto pa = reinterpret_cast<const uint8_t*>(a.data()), pb = reinterpret_cast<const uint8_t*>(b.data());
  const uint8_t *ea = pa + a.size(), *eb = pb + b.size();
  uint64_t ha = 0, hb = 0;
  std::size_t ta = get_varint(pa, ea, &ha), tb = get_varint(pb, eb, &hb);
  const uint8_t *body_a = pa + ha, *body_b = pb + hb;
  if (ha == hb && a.size() == b.size() && std::memcmp(pa, pb, ha) == 0) {
    // The same serial types (the usual pair of neighbouring keys): the columns line up, and
    // the first body byte that differs is in the column that decides.
    const uint8_t* end_a = pa + a.size();
    std::size_t d = static_cast<std::size_t>(std::mismatch(body_a, end_a, body_b).first - body_a);
    if (body_a + d == end_a) return 0;
    uint64_t serial = 0;
    std::size_t start = 0;
    for (std::size_t t = ta; t < ha; start += body_size(serial)) {
      t += get_varint(pa + t, pa + ha, &serial);
      if (d < start + body_size(serial)) break;
    }
    if (int c = compare_same_type(serial, body_a + start, body_b + start, d - start)) return c;
  }
  while (pa + ta < pa + ha && pb + tb < pb + hb) {
    uint64_t sa = 0, sb = 0;
    ta += get_varint(pa + ta, pa + ha, &sa);
    tb += get_varint(pb + tb, pb + hb, &sb);
    if (sa == sb) {  // the same bytes are the same value (the usual case for a key's first columns)
      std::size_t n = body_size(sa);
      std::size_t k = static_cast<std::size_t>(std::mismatch(body_a, body_a + n, body_b).first - body_a);
      if (k < n)
        if (int c = compare_same_type(sa, body_a, body_b, k)) return c;
    } else if (int c = compare_values(decode(sa, body_a), decode(sb, body_b))) {
      return c;
    }
    body_a += body_size(sa);
    body_b += body_size(sb);
  }
  bool more_a = pa + ta < pa + ha, more_b = pb + tb < pb + hb;
  return more_a == more_b ? 0 : more_a ? 1 : -1;
}

bool PageFile::open(int fd, std::string* error) {
  fd_ = fd;
  uint8_t header[100];
  if (::pread(fd, header, sizeof header, 0) != static_cast<ssize_t>(sizeof header)) {
    *error = "cannot read the database's header";
    return false;
  }
  page_size_ = (uint32_t{header[16]} << 8) | header[17];
  if (page_size_ == 1) page_size_ = 65536;
  usable_ = page_size_ - header[20];
  pages_ = get_u32(header + 28);
  // Reserved bytes at the end of a page (an encryption extension's) are not written here;
  // records use serial types 8 and 9, which need schema format 4 (SQLite's default).
  if (page_size_ < 512 || header[18] != 1 || header[19] != 1 || header[20] != 0 || get_u32(header + 44) != 4 ||
      get_u32(header + 24) != get_u32(header + 92) || get_u32(header + 36) != 0) {
    *error = "the database SQLite created is not one its pages can be appended to";
    return false;
  }
  return true;
}

std::string PageFile::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

uint32_t PageFile::allocate() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++pages_;
  if (uint64_t{pages_ - 1} * page_size_ == kLockByteOffset) ++pages_;
  return pages_;
}

bool PageFile::write(uint32_t page, const uint8_t* data) {
  off_t at = static_cast<off_t>(page - 1) * page_size_;
  for (std::size_t done = 0; done < page_size_;) {
    ssize_t n = ::pwrite(fd_, data + done, page_size_ - done, at + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::string("cannot write the database: ") + std::strerror(n < 0 ? errno : ENOSPC);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool PageFile::finish() {
  // The size in the header is trusted only when the change counter beside it matches the
  // "version valid for" field: both move together.
  uint8_t fields[4];
  if (::pread(fd_, fields, 4, 24) != 4) {
    error_ = "cannot read the database's header";
    return false;
  }
  uint32_t counter = get_u32(fields) + 1;
  uint8_t counter_and_size[8], valid_for[4];
  put_u32(counter_and_size, counter);
  put_u32(counter_and_size + 4, pages_);
  put_u32(valid_for, counter);
  if (::pwrite(fd_, counter_and_size, 8, 24) != 8 || ::pwrite(fd_, valid_for, 4, 92) != 4) {
    error_ = std::string("cannot write the database's header: ") + std::strerror(errno);
    return false;
  }
  return true;
}

std::string_view BTreeBuilder::Cells::cell(std::size_t k) const {
  std::size_t begin = k ? ends[k - 1] : 0;
  return std::string_view(bytes).substr(begin, ends[k] - begin);
}
void BTreeBuilder::Cells::add(std::string_view cell) {
  bytes.append(cell);
  ends.push_back(static_cast<uint32_t>(bytes.size()));
}
void BTreeBuilder::Cells::pop() {
  ends.pop_back();
  bytes.resize(ends.empty() ? 0 : ends.back());
}
void BTreeBuilder::Cells::clear() {
  bytes.clear();
  ends.clear();
}

BTreeBuilder::BTreeBuilder(PageFile& file, Kind kind, uint32_t root, std::string name)
    : file_(file), kind_(kind), root_(root), name_(std::move(name)) {}

/// A leaf cell: [payload size][rowid (tables)][the payload, or as much as the format keeps
/// on the page and the number of the first overflow page]. An index's leaf cell is also
/// its interior cell after the child pointer.
std::string_view BTreeBuilder::make_leaf_cell(int64_t rowid, std::string_view record) {
  const std::size_t usable = file_.usable_size(), size = record.size();
  const std::size_t max_local = kind_ == Kind::table ? usable - 35 : (usable - 12) * 64 / 255 - 23;
  const std::size_t min_local = (usable - 12) * 32 / 255 - 23;
  std::size_t local = size;
  if (size > max_local) {
    std::size_t k = min_local + (size - min_local) % (usable - 4);
    local = k <= max_local ? k : min_local;
  }
  // Written in place (2 varints, the local part, an overflow pointer, SQLite's 4-byte floor).
  if (cell_.size() < local + 22) cell_.resize(local + 22);
  auto out = reinterpret_cast<uint8_t*>(cell_.data());
  std::size_t n = put_varint(out, size);
  if (kind_ == Kind::table) n += put_varint(out + n, static_cast<uint64_t>(rowid));
  std::memcpy(out + n, record.data(), local);
  n += local;
  if (local < size) {
    uint32_t first = 0;
    if (!write_overflow(record.substr(local), &first)) return {};
    put_u32(out + n, first);
    n += 4;
  }
  for (; n < 4; ++n) out[n] = 0;  // SQLite's smallest cell
  return {cell_.data(), n};
}

/// The payload past a cell's local part: a chain of pages, each [next page][bytes].
bool BTreeBuilder::write_overflow(std::string_view rest, uint32_t* first) {
  const std::size_t per_page = file_.usable_size() - 4;
  std::vector<uint32_t> pages;
  for (std::size_t at = 0; at < rest.size(); at += per_page) pages.push_back(file_.allocate());
  std::vector<uint8_t> page(file_.usable_size());
  for (std::size_t k = 0; k < pages.size(); ++k) {
    std::fill(page.begin(), page.end(), 0);
    put_u32(page.data(), k + 1 < pages.size() ? pages[k + 1] : 0);
    std::string_view part = rest.substr(k * per_page, per_page);
    std::memcpy(page.data() + 4, part.data(), part.size());
    if (!file_.write(pages[k], page.data())) return false;
  }
  *first = pages.front();
  return true;
}

bool BTreeBuilder::fits(const Cells& cells, std::size_t header, std::string_view one_more) const {
  return header + 2 * (cells.count() + 1) + cells.bytes.size() + one_more.size() <= file_.usable_size();
}

/// A page of cells [0, count) (and, interior, the right-most child), cells packed at its end.
bool BTreeBuilder::write_page(uint32_t page, uint8_t type, const Cells& cells, std::size_t count, uint32_t right) {
  page_.assign(file_.usable_size(), 0);  // (the file's page size is known once it is open)
  bool interior = type == kIndexInterior || type == kTableInterior;
  std::size_t header = interior ? kInteriorHeader : kLeafHeader;
  std::size_t content = page_.size();
  for (std::size_t k = 0; k < count; ++k) {
    std::string_view cell = cells.cell(k);
    content -= cell.size();
    std::memcpy(page_.data() + content, cell.data(), cell.size());
    put_u16(page_.data() + header + 2 * k, static_cast<uint32_t>(content));
  }
  page_[0] = type;
  put_u16(page_.data() + 3, static_cast<uint32_t>(count));
  put_u16(page_.data() + 5, static_cast<uint32_t>(content == 65536 ? 0 : content));
  if (interior) put_u32(page_.data() + 8, right);
  return file_.write(page, page_.data());
}

void BTreeBuilder::add_interior_cell(Cells* cells, uint32_t child, std::string_view separator) {
  uint8_t pointer[4];
  put_u32(pointer, child);
  cells->bytes.append(reinterpret_cast<const char*>(pointer), 4);
  cells->bytes.append(separator);
  cells->ends.push_back(static_cast<uint32_t>(cells->bytes.size()));
}

uint8_t BTreeBuilder::interior_type() const { return kind_ == Kind::table ? kTableInterior : kIndexInterior; }

bool BTreeBuilder::write_leaf(const Cells& leaf, uint32_t* page) {
  *page = file_.allocate();
  return write_page(*page, kind_ == Kind::table ? kTableLeaf : kIndexLeaf, leaf, leaf.count(), 0);
}

bool BTreeBuilder::add_row(int64_t rowid, std::string_view record) {
  if (any_key_ && rowid <= last_rowid_) {
    error_ = "internal error: the rows of " + name_ + " are out of order";
    return false;
  }
  std::string_view cell = make_leaf_cell(rowid, record);
  if (cell.empty()) return false;
  if (!fits(leaf_, kLeafHeader, cell)) {
    uint32_t page = 0;
    std::string separator;
    append_varint(&separator, static_cast<uint64_t>(last_rowid_));  // the largest rowid at its left
    if (!write_leaf(leaf_, &page) || !push_up(0, page, separator)) return false;
    leaf_.clear();
  }
  leaf_.add(cell);
  last_rowid_ = rowid;
  any_key_ = true;
  return true;
}

bool BTreeBuilder::add_key(std::string_view record, Order order) {
  if (order == Order::check) {
    if (any_key_ && compare_records(last_key_, record) >= 0) {
      error_ = "internal error: the keys of " + name_ + " are out of order";
      return false;
    }
    last_key_.assign(record);
  }
  any_key_ = true;
  std::string_view cell = make_leaf_cell(0, record);
  if (cell.empty()) return false;
  if (holding_) {
    // One more key: the held separator has keys on both sides; the full leaf is its left.
    uint32_t page = 0;
    if (!write_leaf(full_leaf_, &page) || !push_up(0, page, separator_)) return false;
    holding_ = false;
    leaf_.clear();
  } else if (!fits(leaf_, kLeafHeader, cell)) {
    // The key goes up between this leaf and the next, unless it turns out to be the last.
    std::swap(full_leaf_, leaf_);
    leaf_.clear();
    separator_.assign(cell);
    holding_ = true;
    return true;
  }
  leaf_.add(cell);
  return true;
}

/// A child and the separator after it go to the interior level above; a full level page
/// keeps all but its last child as cells, takes the last as its right-most child, and
/// sends that child's separator up in turn.
bool BTreeBuilder::push_up(std::size_t level, uint32_t child, std::string_view separator) {
  if (levels_.size() <= level) levels_.resize(level + 1);
  Level& l = levels_[level];
  std::size_t cell_size = 2 + 4 + separator.size();
  if (l.children.size() >= 2 && kInteriorHeader + l.bytes + cell_size > file_.usable_size()) {
    std::size_t last = l.children.size() - 1;
    Cells cells;
    for (std::size_t k = 0; k < last; ++k) add_interior_cell(&cells, l.children[k], l.separators.cell(k));
    uint32_t page = file_.allocate();
    std::string up(l.separators.cell(last));
    if (!write_page(page, interior_type(), cells, cells.count(), l.children[last]) || !push_up(level + 1, page, up))
      return false;
    Level& again = levels_[level];  // push_up may have grown levels_
    again.separators.clear();
    again.children.clear();
    again.bytes = 0;
  }
  Level& now = levels_[level];
  now.children.push_back(child);
  now.separators.add(separator);
  now.bytes += cell_size;
  return true;
}

bool BTreeBuilder::finish_level(std::size_t level, uint32_t last_child) {
  const Level& l = levels_[level];
  Cells cells;
  for (std::size_t k = 0; k < l.children.size(); ++k) add_interior_cell(&cells, l.children[k], l.separators.cell(k));
  bool top = level + 1 == levels_.size();
  uint32_t page = top ? root_ : file_.allocate();
  if (!write_page(page, interior_type(), cells, cells.count(), last_child)) return false;
  return top || finish_level(level + 1, page);
}

bool BTreeBuilder::finish() {
  if (holding_) {
    // The held key was the last: the full leaf's own last key separates it from a leaf of one.
    std::string separator(full_leaf_.cell(full_leaf_.count() - 1));
    full_leaf_.pop();
    uint32_t page = 0;
    if (!write_leaf(full_leaf_, &page) || !push_up(0, page, separator)) return false;
    leaf_.clear();
    leaf_.add(separator_);
    holding_ = false;
  }
  uint8_t leaf_type = kind_ == Kind::table ? kTableLeaf : kIndexLeaf;
  if (levels_.empty()) return write_page(root_, leaf_type, leaf_, leaf_.count(), 0);
  uint32_t page = 0;
  return write_leaf(leaf_, &page) && finish_level(0, page);
}

}  // namespace jqtrace::sqlite_file
