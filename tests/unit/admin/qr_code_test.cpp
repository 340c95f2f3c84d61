#include "refgate/admin/qr_code.hpp"

#include <zlib.h>

#include <catch2/catch.hpp>

// Named per file: the suite compiles several test files as one unit (REFGATE_UNITY_TESTS).
namespace qr_code_test {

using namespace refgate::admin;

namespace {

std::uint32_t u32(const std::string& s, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

struct Chunk {
    std::string type;
    std::string data;
    bool crc_ok = false;
};

std::vector<Chunk> chunks(const std::string& png) {
    std::vector<Chunk> out;
    for (std::size_t at = 8; at + 12 <= png.size();) {
        std::uint32_t length = u32(png, at);
        Chunk c{png.substr(at + 4, 4), png.substr(at + 8, length), false};
        auto crc = crc32(0L, reinterpret_cast<const Bytef*>(png.data() + at + 4), length + 4);
        c.crc_ok = crc == u32(png, at + 8 + length);
        out.push_back(std::move(c));
        at += 12 + length;
    }
    return out;
}

// The PNG's pixels (true: dark), decompressed from its IDAT.
std::vector<std::vector<bool>> decode_pixels(const std::string& idat, int width, int height) {
    std::size_t stride = (static_cast<std::size_t>(width) + 7) / 8;
    std::string raw((stride + 1) * static_cast<std::size_t>(height), '\0');
    uLongf size = raw.size();
    REQUIRE(uncompress(reinterpret_cast<Bytef*>(raw.data()), &size,
                       reinterpret_cast<const Bytef*>(idat.data()), idat.size()) == Z_OK);
    REQUIRE(size == raw.size());
    std::vector<std::vector<bool>> image(static_cast<std::size_t>(height));
    for (int y = 0; y < height; ++y) {
        std::size_t row = static_cast<std::size_t>(y) * (stride + 1);
        CHECK(raw[row] == 0);  // filter type none
        for (int x = 0; x < width; ++x) {
            auto byte = static_cast<unsigned char>(raw[row + 1 + static_cast<std::size_t>(x / 8)]);
            image[static_cast<std::size_t>(y)].push_back((byte & (0x80 >> (x % 8))) == 0);
        }
    }
    return image;
}

}  // namespace

TEST_CASE("a QR PNG has a valid structure and checksums and draws each module with a quiet zone",
          "[admin][qr]") {
    auto matrix = encode_qr("https://picks.example.com/go/tailscale?src=newsletter");
    REQUIRE(matrix);
    CHECK(matrix->size >= 21);
    int total = matrix->size + 2 * kQrQuietZone;
    int pixels = total * 3;  // three pixels a module
    std::string png = qr_png(*matrix, pixels);
    CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
    auto list = chunks(png);
    REQUIRE(list.size() == 3);
    CHECK(list[0].type == "IHDR");
    CHECK(list[1].type == "IDAT");
    CHECK(list[2].type == "IEND");
    for (const auto& c : list) CHECK(c.crc_ok);
    CHECK(u32(list[0].data, 0) == static_cast<std::uint32_t>(pixels));
    CHECK(u32(list[0].data, 4) == static_cast<std::uint32_t>(pixels));
    CHECK(list[0].data.substr(8) == std::string("\x01\x00\x00\x00\x00", 5));
    auto image = decode_pixels(list[1].data, pixels, pixels);
    for (int y = 0; y < total; ++y) {
        for (int x = 0; x < total; ++x) {
            int mx = x - kQrQuietZone;
            int my = y - kQrQuietZone;
            bool dark =
                mx >= 0 && my >= 0 && mx < matrix->size && my < matrix->size && matrix->at(mx, my);
            INFO("module " << x << "," << y);
            bool drawn =
                image[static_cast<std::size_t>(y * 3 + 1)][static_cast<std::size_t>(x * 3 + 1)];
            REQUIRE(drawn == dark);
        }
    }
}

TEST_CASE("a QR SVG is one crisp-edged path in a viewBox with a four-module quiet zone",
          "[admin][qr]") {
    QrMatrix m{.size = 3, .dark = {true, true, false, false, false, false, false, true, true}};
    std::string svg = qr_svg(m, 256);
    CHECK(
        svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"256\" height=\"256\""));
    CHECK(svg.find("viewBox=\"0 0 11 11\"") != std::string::npos);
    CHECK(svg.find("shape-rendering=\"crispEdges\"") != std::string::npos);
    CHECK(svg.find("<path") == svg.rfind("<path"));
    CHECK(svg.find("d=\"M4 4h2v1h-2zM5 6h2v1h-2z\"") != std::string::npos);
}

TEST_CASE("text too long for any QR version is refused", "[admin][qr]") {
    CHECK_FALSE(encode_qr(std::string(8000, 'a')));
}

}  // namespace qr_code_test
