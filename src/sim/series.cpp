#include "sim/series.h"

#include <cmath>

namespace kvb::sim {

namespace {
void accumulate(StateSample& a, const StateSample& s, double w) {
    a.token += s.token * w;
    a.reserved += s.reserved * w;
    a.internal += s.internal * w;
    a.external += s.external * w;
    a.cached += s.cached * w;
    a.free += s.free * w;
    a.null_block += s.null_block * w;
    a.running += s.running * w;
    a.waiting += s.waiting * w;
    a.saved += s.saved * w;
    a.logical += s.logical * w;
}
}  // namespace

void SeriesAccumulator::init(int32_t points, double first_width_s) {
    width_ = first_width_s;
    b_.assign(static_cast<size_t>(points < 1 ? 1 : points) * 2, Bucket{});
    used_ = 0;
}

void SeriesAccumulator::cover(double t) {
    while (t > width_ * static_cast<double>(b_.size())) {
        const size_t half = b_.size() / 2;
        for (size_t i = 0; i < half; ++i) {
            Bucket m = b_[2 * i];
            const Bucket& o = b_[2 * i + 1];
            m.weight += o.weight;
            accumulate(m.sum, o.sum, 1.0);
            m.preemptions += o.preemptions;
            m.finished += o.finished;
            b_[i] = m;
        }
        for (size_t i = half; i < b_.size(); ++i) b_[i] = Bucket{};
        used_ = (used_ + 1) / 2;
        width_ *= 2;
    }
}

static size_t clamp_index(double t, double width, size_t n) {
    const double f = std::floor(t / width);
    if (!(f > 0)) return 0;
    const size_t i = static_cast<size_t>(f);
    return i >= n ? n - 1 : i;
}

void SeriesAccumulator::add(double t0, double t1, const StateSample& s) {
    if (!(t1 > t0)) return;
    cover(t1);
    size_t i = clamp_index(t0, width_, b_.size());
    double t = t0;
    while (t < t1) {
        double end = static_cast<double>(i + 1) * width_;
        if (end > t1 || i + 1 >= b_.size()) end = t1;
        const double w = end - t;
        if (w > 0) {
            b_[i].weight += w;
            accumulate(b_[i].sum, s, w);
        }
        if (i + 1 > used_) used_ = i + 1;
        t = end;
        ++i;
        if (i >= b_.size()) break;
    }
}

void SeriesAccumulator::event(double t, int64_t preemptions, int64_t finished) {
    if (preemptions == 0 && finished == 0) return;
    cover(t);
    const size_t i = clamp_index(t, width_, b_.size());
    b_[i].preemptions += preemptions;
    b_[i].finished += finished;
    if (i + 1 > used_) used_ = i + 1;
}

}  // namespace kvb::sim
