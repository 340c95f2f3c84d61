#pragma once

// QR codes of public link URLs: the matrix from libqrencode, the SVG and PNG images written here
// (one path with crisp edges; a greyscale PNG compressed with zlib), each with a quiet zone of
// four modules.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace refgate::admin {

inline constexpr int kQrQuietZone = 4;  // modules of light margin on each side
inline constexpr int kQrMinPixels = 64;
inline constexpr int kQrMaxPixels = 2048;
inline constexpr int kQrDefaultPixels = 256;

// The symbol's modules, row by row; true is dark.
struct QrMatrix {
    int size = 0;  // modules per side, without the quiet zone
    std::vector<bool> dark;
    bool at(int x, int y) const { return dark[static_cast<std::size_t>(y * size + x)]; }
};

// `text` as a QR symbol (byte mode, error correction level M); nullopt when it does not fit.
std::optional<QrMatrix> encode_qr(std::string_view text);

// An SVG `pixels` wide and high: the dark modules as one path over a light background, in a
// viewBox of (size + 8) modules.
std::string qr_svg(const QrMatrix& matrix, int pixels);

// A `pixels` x `pixels` 1-bit greyscale PNG; each pixel takes the module it falls in.
std::string qr_png(const QrMatrix& matrix, int pixels);

// A PNG file of 1-bit greyscale rows (each `width` bits, 1 white, 0 black, most significant bit
// first), as a PNG writer emits it: signature, IHDR, one IDAT (zlib), IEND.
std::string png_greyscale_1bit(int width, int height, const std::vector<std::uint8_t>& rows);

}  // namespace refgate::admin
