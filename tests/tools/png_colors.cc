// png-colors FILE X0 Y0 X1 Y1: how many pixels of each colour a box of a PNG has, as
// "#RRGGBB COUNT" lines, most first; "blank" on stderr and exit 1 when the whole image
// is one colour. For the browser tests, which check what chromium drew (8-bit RGB or
// RGBA PNGs without interlacing, which is what its screenshots are).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <zlib.h>

namespace {

uint32_t be32(const unsigned char* p) { return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3]; }

int fail(const char* why) {
  std::fprintf(stderr, "png-colors: %s\n", why);
  return 2;
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

}  // namespace

int main(int argc, char** argv) {
  // --first-solid-row: of the box, only its first row that is at least 90% not white and
  // not one colour (a bar of several colours across the box, wherever the page's text put
  // it; a rule line is one colour).
  bool solid_row = argc == 7 && std::string(argv[6]) == "--first-solid-row";
  if (argc != 6 && !solid_row) return fail("usage: png-colors FILE X0 Y0 X1 Y1 [--first-solid-row]");
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<unsigned char> png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (png.size() < 33 || png[1] != 'P' || png[2] != 'N' || png[3] != 'G') return fail("not a PNG");
  uint32_t width = be32(&png[16]), height = be32(&png[20]);
  int depth = png[24], type = png[25], interlace = png[28];
  if (depth != 8 || (type != 2 && type != 6) || interlace) return fail("not an 8-bit RGB(A) PNG without interlacing");
  std::size_t channels = type == 6 ? 4 : 3;
  std::vector<unsigned char> idat;
  for (std::size_t at = 8; at + 12 <= png.size();) {
    uint32_t length = be32(&png[at]);
    std::string kind(png.begin() + static_cast<long>(at) + 4, png.begin() + static_cast<long>(at) + 8);
    if (at + 12 + length > png.size()) return fail("truncated chunk");
    if (kind == "IDAT") idat.insert(idat.end(), png.begin() + static_cast<long>(at) + 8, png.begin() + static_cast<long>(at + 8 + length));
    at += 12 + length;
  }
  std::size_t stride = width * channels;
  std::vector<unsigned char> raw(height * (stride + 1));
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, idat.data(), idat.size()) != Z_OK || raw_size != raw.size())
    return fail("bad image data");
  std::vector<unsigned char> pixels(height * stride), zero(stride, 0);
  for (std::size_t y = 0; y < height; ++y) {
    const unsigned char* line = &raw[y * (stride + 1) + 1];
    unsigned char* out = &pixels[y * stride];
    const unsigned char* up = y ? &pixels[(y - 1) * stride] : zero.data();
    for (std::size_t x = 0; x < stride; ++x) {
      int a = x >= channels ? out[x - channels] : 0, b = up[x], c = x >= channels ? up[x - channels] : 0;
      int predictor = 0;
      switch (raw[y * (stride + 1)]) {
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: predictor = paeth(a, b, c); break;
      }
      out[x] = static_cast<unsigned char>(line[x] + predictor);
    }
  }
  uint32_t x0 = std::min<uint32_t>(width, static_cast<uint32_t>(std::atoi(argv[2]))),
           y0 = std::min<uint32_t>(height, static_cast<uint32_t>(std::atoi(argv[3]))),
           x1 = std::min<uint32_t>(width, static_cast<uint32_t>(std::atoi(argv[4]))),
           y1 = std::min<uint32_t>(height, static_cast<uint32_t>(std::atoi(argv[5])));
  if (solid_row) {
    for (uint32_t y = y0; y < y1; ++y) {
      uint32_t colored = 0;
      std::map<uint32_t, uint32_t> row;
      for (uint32_t x = x0; x < x1; ++x) {
        const unsigned char* p = &pixels[y * stride + x * channels];
        colored += !(p[0] == 255 && p[1] == 255 && p[2] == 255);
        ++row[uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]];
      }
      uint32_t most = 0;
      for (auto [rgb, n] : row) most = std::max(most, n);
      if (x1 > x0 && colored * 10 >= (x1 - x0) * 9 && most * 10 < (x1 - x0) * 9) {
        y0 = y;
        y1 = y + 1;
        break;
      }
    }
  }
  std::map<uint32_t, uint64_t> counts, everywhere;
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const unsigned char* p = &pixels[y * stride + x * channels];
      uint32_t rgb = uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2];
      ++everywhere[rgb];
      if (x >= x0 && x < x1 && y >= y0 && y < y1) ++counts[rgb];
    }
  std::vector<std::pair<uint64_t, uint32_t>> sorted;
  for (auto [rgb, n] : counts) sorted.push_back({n, rgb});
  std::sort(sorted.rbegin(), sorted.rend());
  for (auto [n, rgb] : sorted) std::printf("#%06X %llu\n", rgb, static_cast<unsigned long long>(n));
  if (everywhere.size() < 2) {
    std::fprintf(stderr, "blank\n");
    return 1;
  }
  return 0;
}
