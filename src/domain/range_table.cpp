#include "refgate/domain/range_table.hpp"

namespace refgate::domain {

template <typename V>
void RangeTableBuilder<V>::add_v4(std::uint32_t first, std::uint32_t last, V value) {
    if (first <= last) v4_.pending.push_back({first, last, value});
}

template <typename V>
void RangeTableBuilder<V>::add_v6(Address128 first, Address128 last, V value) {
    if (first <= last) v6_.pending.push_back({first, last, value});
}

template <typename V>
void RangeTableBuilder<V>::finish() {
    v4_.finish();
    v6_.finish();
}

template <typename V>
template <typename T>
void RangeTableBuilder<V>::Table<T>::finish() {
    std::sort(pending.begin(), pending.end(),
              [](const Pending& a, const Pending& b) { return a.first < b.first; });
    starts.clear();
    values.clear();
    auto push = [&](T start, V value) {
        if (!values.empty() && values.back() == value) return;  // one range with its left
        starts.push_back(start);
        values.push_back(value);
    };
    T next = 0;  // the first address not covered yet
    bool done = false;
    for (const Pending& r : pending) {
        if (done || r.last < next) continue;
        if (r.first > next) push(next, V{});
        push(std::max(r.first, next), r.value);
        done = r.last == static_cast<T>(~T{0});
        next = r.last + 1;
    }
    if (!done) push(next, V{});
    // Not `pending = {}`: that assigns an empty initializer list and keeps the capacity (30 MiB
    // for a whole country database, held for the life of the process).
    std::vector<Pending>().swap(pending);
    starts.shrink_to_fit();
    values.shrink_to_fit();
    using Column = RangeColumn<T, V>;
    index.assign(Column::kIndexSize, 0);
    std::size_t range = 0;
    for (std::size_t prefix = 0; prefix < index.size(); ++prefix) {
        T first = static_cast<T>(static_cast<T>(prefix) << Column::kShift);
        while (range + 1 < starts.size() && starts[range + 1] <= first) ++range;
        index[prefix] = static_cast<std::uint32_t>(range);
    }
}

template class RangeTableBuilder<std::uint16_t>;
template class RangeTableBuilder<std::uint32_t>;

}  // namespace refgate::domain
