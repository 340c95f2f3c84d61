// The snapshot file reader (the streaming scanner of src/codec/snapshot_file.cpp). Invariants: a
// malformed file is refused with std::runtime_error or nlohmann's exception, never anything else;
// a file it reads is JSON to nlohmann too; writing the snapshot and reading that file again gives
// the same snapshot (the same file).

#include <string>

#include "fuzz_check.hpp"
#include "refgate/codec/snapshot_file.hpp"
#include "refgate/domain/snapshot.hpp"

namespace {

using Json = nlohmann::ordered_json;

std::string file_text(const refgate::domain::Snapshot& snapshot) {
    std::string text;
    refgate::codec::write_snapshot_json(snapshot,
                                        [&text](std::string_view piece) { text.append(piece); });
    return text;
}

std::shared_ptr<const refgate::domain::Snapshot> read(std::string_view text) {
    try {
        return refgate::codec::read_snapshot_json(text, {});
    } catch (const std::runtime_error&) {
        return nullptr;
    } catch (const Json::exception&) {
        return nullptr;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto snapshot = read(refgate::fuzz::as_text(data, size));
    if (!snapshot) return 0;
    std::string written = file_text(*snapshot);

    Json doc = Json::parse(refgate::fuzz::as_text(data, size), nullptr, false);
    if (doc.is_discarded()) {
        // Known difference: the scanner does not check UTF-8 inside strings it skips (unknown
        // members, link strings that are validated after). Anything else nlohmann refuses is a
        // finding.
        bool non_ascii = false;
        for (std::size_t i = 0; i < size; ++i) non_ascii = non_ascii || data[i] >= 0x80;
        FUZZ_CHECK(non_ascii);
    }
    auto again = read(written);
    FUZZ_CHECK(again != nullptr);
    FUZZ_CHECK(file_text(*again) == written);
    FUZZ_CHECK(again->rejected().empty());
    return 0;
}
