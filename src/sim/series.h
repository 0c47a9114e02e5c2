// Time-weighted accumulation of the simulator's state into a bounded number of
// time buckets: the bucket width doubles (pairs merge) whenever the run outgrows
// them, so memory stays fixed however long the run is and no horizon is needed
// in advance.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvb::sim {

struct StateSample {  // absolute values (slots, requests, blocks), held over an interval
    double token = 0, reserved = 0, internal = 0, external = 0, cached = 0, free = 0, null_block = 0;
    double running = 0, waiting = 0, saved = 0, logical = 0;
};

class SeriesAccumulator {
public:
    struct Bucket {
        double weight = 0;
        StateSample sum;  // value x seconds
        int64_t preemptions = 0, finished = 0;
    };

    void init(int32_t points, double first_width_s = 1e-3);
    void add(double t0, double t1, const StateSample& s);
    void event(double t, int64_t preemptions, int64_t finished);
    double width() const { return width_; }
    const std::vector<Bucket>& buckets() const { return b_; }
    size_t used() const { return used_; }

private:
    void cover(double t);
    double width_ = 1e-3;
    std::vector<Bucket> b_;
    size_t used_ = 0;
};

}  // namespace kvb::sim
