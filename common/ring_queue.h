// A first-in first-out queue that keeps its memory (header-only: the targets
// that include it link Boost::headers).
#pragma once

#include <boost/circular_buffer.hpp>

#include <cstddef>
#include <utility>

namespace cohort {

/// A FIFO over boost::circular_buffer whose capacity doubles when a push finds it
/// full and never shrinks. A queue one thread pushes to and another pops from
/// (a stream's tasks, a communicator's calls) must not allocate per element:
/// std::deque frees a node on one thread for the other to allocate again, and
/// glibc hands the freed top of its heap back to the system, so the next push
/// faults its pages in again. Not thread-safe: its owner's lock guards it.
template <typename T>
class RingQueue {
 public:
  explicit RingQueue(std::size_t capacity = 16) : buf_(capacity) {}

  void push_back(T&& value) {
    if (buf_.full()) buf_.set_capacity(buf_.capacity() * 2);
    buf_.push_back(std::move(value));
  }
  void pop_front() { buf_.pop_front(); }
  void pop_back() { buf_.pop_back(); }
  T& front() { return buf_.front(); }
  const T& front() const { return buf_.front(); }
  T& back() { return buf_.back(); }
  T& operator[](std::size_t i) { return buf_[i]; }
  const T& operator[](std::size_t i) const { return buf_[i]; }
  std::size_t size() const { return buf_.size(); }
  bool empty() const { return buf_.empty(); }
  auto begin() const { return buf_.begin(); }
  auto end() const { return buf_.end(); }

 private:
  boost::circular_buffer<T> buf_;
};

}  // namespace cohort
