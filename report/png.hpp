#pragma once
// Raster images for the HTML report (report/html.hpp): an indexed-colour PNG, written without
// compression (deflate's stored blocks), as a data URI an <image> draws. A pixel per pair keeps a
// fleet's heatmap of thousands of ranks one element instead of millions. No library, no state.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mtperf::png {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// A PNG of width x height pixels, each a byte indexing `palette` (1 to 256 colours), row by
// row from the top left. Throws std::invalid_argument when the sizes disagree.
std::string indexed(size_t width, size_t height, const std::vector<uint8_t>& pixels,
                    const std::vector<Rgb>& palette);

// RFC 4648 base64, padded.
std::string base64(std::string_view bytes);

// "data:image/png;base64,..." of a PNG.
std::string data_uri(std::string_view png);

}  // namespace mtperf::png
