#include "refgate/admin/qr_code.hpp"

#include <qrencode.h>
#include <zlib.h>

#include <memory>
#include <stdexcept>

namespace refgate::admin {
namespace {

struct QrFree {
    void operator()(QRcode* code) const { QRcode_free(code); }
};

void put_u32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

// A chunk: length, type, data, and the CRC-32 of type and data (PNG spec, section 5.3).
void put_chunk(std::string& out, std::string_view type, std::string_view data) {
    put_u32(out, static_cast<std::uint32_t>(data.size()));
    std::string typed(type);
    typed.append(data);
    out.append(typed);
    auto crc =
        crc32(0L, reinterpret_cast<const Bytef*>(typed.data()), static_cast<uInt>(typed.size()));
    put_u32(out, static_cast<std::uint32_t>(crc));
}

std::string deflate(const std::vector<std::uint8_t>& raw) {
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    std::string out(size, '\0');
    if (compress2(reinterpret_cast<Bytef*>(out.data()), &size, raw.data(),
                  static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION) != Z_OK)
        throw std::runtime_error("zlib could not compress the PNG's rows");
    out.resize(size);
    return out;
}

}  // namespace

std::optional<QrMatrix> encode_qr(std::string_view text) {
    std::string nul_terminated(text);
    std::unique_ptr<QRcode, QrFree> code(
        QRcode_encodeString(nul_terminated.c_str(), 0, QR_ECLEVEL_M, QR_MODE_8, 1));
    if (!code) return std::nullopt;
    QrMatrix matrix;
    matrix.size = code->width;
    matrix.dark.resize(static_cast<std::size_t>(code->width) * code->width);
    for (std::size_t i = 0; i < matrix.dark.size(); ++i) matrix.dark[i] = (code->data[i] & 1) != 0;
    return matrix;
}

std::string qr_svg(const QrMatrix& m, int pixels) {
    int total = m.size + 2 * kQrQuietZone;
    std::string n = std::to_string(total);
    std::string px = std::to_string(pixels);
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px + "\" height=\"" +
                      px + "\" viewBox=\"0 0 " + n + " " + n +
                      "\" shape-rendering=\"crispEdges\"><rect width=\"" + n + "\" height=\"" + n +
                      "\" fill=\"#fff\"/><path fill=\"#000\" d=\"";
    // Each run of dark modules in a row is one rectangle of the path.
    for (int y = 0; y < m.size; ++y) {
        for (int x = 0; x < m.size;) {
            if (!m.at(x, y)) {
                ++x;
                continue;
            }
            int start = x;
            while (x < m.size && m.at(x, y)) ++x;
            // Appended piece by piece: `"M" + std::string&&` trips GCC 12's -Wrestrict at -O3.
            svg += 'M';
            svg += std::to_string(start + kQrQuietZone);
            svg += ' ';
            svg += std::to_string(y + kQrQuietZone);
            svg += 'h';
            svg += std::to_string(x - start);
            svg += "v1h-";
            svg += std::to_string(x - start);
            svg += 'z';
        }
    }
    svg += "\"/></svg>\n";
    return svg;
}

std::string qr_png(const QrMatrix& m, int pixels) {
    int total = m.size + 2 * kQrQuietZone;
    std::size_t stride = (static_cast<std::size_t>(pixels) + 7) / 8;
    std::vector<std::uint8_t> rows(stride * static_cast<std::size_t>(pixels), 0xff);
    for (int py = 0; py < pixels; ++py) {
        int y = py * total / pixels - kQrQuietZone;
        if (y < 0 || y >= m.size) continue;
        for (int px = 0; px < pixels; ++px) {
            int x = px * total / pixels - kQrQuietZone;
            if (x < 0 || x >= m.size || !m.at(x, y)) continue;
            rows[static_cast<std::size_t>(py) * stride + static_cast<std::size_t>(px / 8)] &=
                static_cast<std::uint8_t>(~(0x80u >> (px % 8)));
        }
    }
    return png_greyscale_1bit(pixels, pixels, rows);
}

std::string png_greyscale_1bit(int width, int height, const std::vector<std::uint8_t>& rows) {
    std::size_t stride = (static_cast<std::size_t>(width) + 7) / 8;
    // Each row is preceded by its filter type: 0, none.
    std::vector<std::uint8_t> raw;
    raw.reserve((stride + 1) * static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y) {
        raw.push_back(0);
        auto row = rows.begin() + static_cast<std::ptrdiff_t>(stride * static_cast<std::size_t>(y));
        raw.insert(raw.end(), row, row + static_cast<std::ptrdiff_t>(stride));
    }
    std::string png("\x89PNG\r\n\x1a\n", 8);
    std::string header;
    put_u32(header, static_cast<std::uint32_t>(width));
    put_u32(header, static_cast<std::uint32_t>(height));
    header.append({1, 0, 0, 0, 0});  // bit depth 1, greyscale, deflate, filter 0, no interlace
    put_chunk(png, "IHDR", header);
    put_chunk(png, "IDAT", deflate(raw));
    put_chunk(png, "IEND", {});
    return png;
}

}  // namespace refgate::admin
