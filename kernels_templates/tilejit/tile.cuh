// tilejit's device tile API: the programming model of CUDA Tile C++ (tensor_span, partition_view,
// load/store with and without masks, tile arithmetic, bid) delivered on CUDA 13.0 as plain templates.
//
// A kernel describes tiles; the layout of a tile over the block's threads is explicit (a
// block_layout<Threads, Vec>: each thread holds groups of Vec consecutive elements, which become one
// vector access of up to 16 bytes), so the runtime picks the block size and vector width.
//
//   namespace ct = tilejit::tiles;
//   auto view = ct::partition_view{ct::tensor_span{ct::assume_aligned<16>(a), ct::extents{n}}, ct::shape<1024>{}};
//   auto tile = view.load_masked(ct::bid().x);   // ct::tile<float, ct::shape<1024>, ...>
//   out_view.store_masked(tile + tile, ct::bid().x);
#pragma once

#include "tilejit/dtype.cuh"
#include "tilejit/meta.cuh"

namespace tilejit {
namespace tiles {

// ---- integers known at compile time ---------------------------------------------------------
template <int N> struct ic {
  enum : int { value = N };
  __host__ __device__ constexpr operator int() const { return N; }
};

namespace literals {
namespace detail {
template <char... Cs> struct parse_int;
template <> struct parse_int<> {
  enum : long long { value = 0, scale = 1 };
};
template <char C, char... Cs> struct parse_int<C, Cs...> {
  static_assert(C >= '0' && C <= '9', "an _ic literal must be a decimal integer");
  enum : long long {
    scale = parse_int<Cs...>::scale * 10,
    value = (C - '0') * parse_int<Cs...>::scale + parse_int<Cs...>::value
  };
};
}  // namespace detail
template <char... Cs> __host__ __device__ constexpr ic<static_cast<int>(detail::parse_int<Cs...>::value)> operator""_ic() {
  return {};
}
}  // namespace literals

template <int A, int B> struct static_min {
  enum : int { value = A < B ? A : B };
};
__host__ __device__ constexpr bool is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// ---- extents: sizes of a tensor, each either ic<N> (static) or a run-time i64 -----------------
template <class D> struct dim_of { using type = i64; };
template <int N> struct dim_of<ic<N>> { using type = ic<N>; };

template <class... Ds> struct extents {
  enum : int { rank = sizeof...(Ds) };
  static_assert(rank >= 1 && rank <= 2, "extents: tilejit tiles are 1-D or 2-D");
  i64 sizes[rank];
  template <class... As>
  __host__ __device__ constexpr extents(As... as) : sizes{static_cast<i64>(as)...} {
    static_assert(sizeof...(As) == rank, "extents: one size per dimension");
  }
  __host__ __device__ constexpr i64 extent(int i) const { return sizes[i]; }
};
template <class... Ds> extents(Ds...) -> extents<typename dim_of<Ds>::type...>;

// ---- pointers with a known alignment ---------------------------------------------------------
template <class T, int Align> struct aligned_ptr {
  static_assert(is_pow2(Align), "assume_aligned: the alignment must be a power of two");
  T* ptr;
};
// Promises that p is aligned to Align bytes; the loads and stores of a span over it may then be
// vectorised up to that width. The runtime only launches a kernel when the promise holds.
template <int Align, class T> __host__ __device__ constexpr aligned_ptr<T, Align> assume_aligned(T* p) { return {p}; }
template <class T, int Align> __host__ __device__ constexpr aligned_ptr<T, Align> assume_aligned(T* p, ic<Align>) {
  return {p};
}

// ---- tensor_span: a pointer with extents (row-major; 2-D spans may have a leading dimension) ---
template <class T, class Extents, int Align = int(sizeof(T))> struct tensor_span {
  using element_type = T;
  using extents_type = Extents;
  enum : int { rank = Extents::rank, alignment = Align };
  T* data;
  Extents ext;
  i64 row_stride;  // elements between rows (2-D); unused for 1-D

  __host__ __device__ constexpr tensor_span(T* p, Extents e) : data(p), ext(e), row_stride(e.sizes[rank - 1]) {}
  __host__ __device__ constexpr tensor_span(aligned_ptr<T, Align> p, Extents e)
      : data(p.ptr), ext(e), row_stride(e.sizes[rank - 1]) {}
  __host__ __device__ constexpr tensor_span(T* p, Extents e, i64 ld) : data(p), ext(e), row_stride(ld) {}
  __host__ __device__ constexpr i64 extent(int i) const { return ext.sizes[i]; }
};
template <class T, class E> tensor_span(T*, E) -> tensor_span<T, E, int(sizeof(T))>;
template <class T, int A, class E> tensor_span(aligned_ptr<T, A>, E) -> tensor_span<T, E, A>;
template <class T, class E> tensor_span(T*, E, i64) -> tensor_span<T, E, int(sizeof(T))>;

// ---- tile shapes and their layout over a block's threads -------------------------------------
template <int... Ns> struct shape {
  enum : int { rank = sizeof...(Ns), size = (Ns * ...) };
};
template <int... Ns> shape(ic<Ns>...) -> shape<Ns...>;

// Threads threads each hold groups of Vec consecutive elements: element e of a 1-D tile lives in
// thread (e / Vec) % Threads, and a thread's groups are Threads * Vec elements apart (coalesced).
template <int Threads, int Vec> struct block_layout {
  static_assert(Threads % 32 == 0 && Threads <= 1024, "block_layout: Threads must be a multiple of 32, at most 1024");
  static_assert(is_pow2(Vec) && Vec <= 16, "block_layout: Vec must be a power of two up to 16");
  enum : int { threads = Threads, vec = Vec };
};
template <class Shape> struct default_layout {
  enum : int { vec = 4, threads = static_min<256, Shape::size / 4>::value };
  using type = block_layout<threads, vec>;
};

// ---- register tiles ----------------------------------------------------------------------------
template <class T, class Shape, class Layout = typename default_layout<Shape>::type> struct tile {
  static_assert(Shape::rank == 1, "register tiles are 1-D; 2-D tiles go through shared memory");
  static_assert(Shape::size % (Layout::threads * Layout::vec) == 0,
                "tile: the tile size must be a multiple of Threads * Vec of its layout");
  using element_type = T;
  using shape_type = Shape;
  using layout_type = Layout;
  enum : int {
    fragment = Shape::size / Layout::threads,  // elements per thread
    groups = fragment / Layout::vec
  };
  T v[fragment];

  // Offset in the tile of this thread's j-th element.
  __device__ static constexpr int offset(int j, int thread) {
    return (j / Layout::vec) * Layout::threads * Layout::vec + thread * Layout::vec + j % Layout::vec;
  }
};

template <class Tile> __device__ Tile full(typename Tile::element_type value) {
  Tile t;
#pragma unroll
  for (int j = 0; j < Tile::fragment; ++j) t.v[j] = value;
  return t;
}

// Elementwise map over tiles of one shape and layout.
template <class F, class T, class S, class L, class... Ts>
__device__ auto map(F f, const tile<T, S, L>& a, const tile<Ts, S, L>&... rest) {
  using R = decltype(f(a.v[0], rest.v[0]...));
  tile<R, S, L> out;
#pragma unroll
  for (int j = 0; j < tile<T, S, L>::fragment; ++j) out.v[j] = f(a.v[j], rest.v[j]...);
  return out;
}

template <class U, class T, class S, class L> __device__ tile<U, S, L> convert(const tile<T, S, L>& t) {
  return map([](T x) { return convert_to<U>(to_compute(x)); }, t);
}

#define TILEJIT_TILE_BINARY_OP(op)                                                                        \
  template <class T, class U, class S, class L>                                                           \
  __device__ auto operator op(const tile<T, S, L>& a, const tile<U, S, L>& b) {                            \
    return map([](T x, U y) { return to_compute(x) op to_compute(y); }, a, b);                            \
  }                                                                                                       \
  template <class T, class S, class L>                                                                    \
  __device__ auto operator op(const tile<T, S, L>& a, compute_t<T> s) {                                   \
    return map([s](T x) { return to_compute(x) op s; }, a);                                               \
  }                                                                                                       \
  template <class T, class S, class L>                                                                    \
  __device__ auto operator op(compute_t<T> s, const tile<T, S, L>& a) {                                   \
    return map([s](T x) { return s op to_compute(x); }, a);                                               \
  }
TILEJIT_TILE_BINARY_OP(+)
TILEJIT_TILE_BINARY_OP(-)
TILEJIT_TILE_BINARY_OP(*)
TILEJIT_TILE_BINARY_OP(/)
#undef TILEJIT_TILE_BINARY_OP

// The sum of every element of a tile over the whole block, in the compute type; every thread gets
// it. The block must be the tile layout's Threads threads, all of which call it (it synchronises the
// block, and may be called again right after: the first barrier keeps one call's partial sums from
// overwriting those the previous call is still reading).
template <class T, class S, class L> __device__ compute_t<T> sum(const tile<T, S, L>& t) {
  using R = compute_t<T>;
  enum : int { kWarps = L::threads / 32 };
  R s = R(0);
#pragma unroll
  for (int j = 0; j < tile<T, S, L>::fragment; ++j) s += to_compute(t.v[j]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
  __shared__ R warp_sums[kWarps];
  __syncthreads();
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
  __syncthreads();
  R total = R(0);
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += warp_sums[w];
  return total;
}

// ---- vector memory access -----------------------------------------------------------------------
template <int Bytes> struct raw_vector;
template <> struct raw_vector<1> { using type = unsigned char; };
template <> struct raw_vector<2> { using type = unsigned short; };
template <> struct raw_vector<4> { using type = unsigned int; };
template <> struct raw_vector<8> { using type = uint2; };
template <> struct raw_vector<16> { using type = uint4; };

// Copies N elements between global memory and registers in the widest accesses that the
// alignment allows (at most 16 bytes each).
template <class T, int N, int Align> struct vector_io {
  enum : int { bytes = N * int(sizeof(T)), chunk = static_min<static_min<16, bytes>::value, Align>::value };
  static_assert(is_pow2(chunk), "vector_io: accesses must be a power of two bytes");
  using raw = typename raw_vector<chunk>::type;
  __device__ static void load(T* regs, const T* src) {
    raw tmp[bytes / chunk];
#pragma unroll
    for (int k = 0; k < bytes / chunk; ++k) tmp[k] = reinterpret_cast<const raw*>(src)[k];
    memcpy(regs, tmp, bytes);
  }
  __device__ static void store(T* dst, const T* regs) {
    raw tmp[bytes / chunk];
    memcpy(tmp, regs, bytes);
#pragma unroll
    for (int k = 0; k < bytes / chunk; ++k) reinterpret_cast<raw*>(dst)[k] = tmp[k];
  }
};

// ---- partition_view: a span cut into tiles of Shape ---------------------------------------------
template <class Span, class Shape, class Layout = typename default_layout<Shape>::type> struct partition_view {
  static_assert(Span::rank == Shape::rank, "partition_view: the tile shape must have the span's rank");
  static_assert(Shape::rank == 1, "partition_view: register tiles are 1-D");
  using T = typename Span::element_type;
  using value_type = typename tilejit::remove_const<T>::type;
  using tile_type = tile<value_type, Shape, Layout>;
  enum : int { kTile = Shape::size, kVec = Layout::vec };
  Span span;

  __host__ __device__ constexpr partition_view(Span s, Shape = {}, Layout = {}) : span(s) {}

  // Number of tiles, the last one possibly partial.
  __device__ i64 num_tiles() const { return (span.extent(0) + kTile - 1) / kTile; }
  // True when tile i lies entirely inside the span.
  __device__ bool is_full(i64 i) const { return (i + 1) * kTile <= span.extent(0); }

  // Loads tile i, which must lie entirely inside the span.
  __device__ tile_type load(i64 i) const {
    tile_type t;
    const T* base = span.data + i * kTile + threadIdx.x * kVec;
#pragma unroll
    for (int g = 0; g < tile_type::groups; ++g)
      vector_io<value_type, kVec, Span::alignment>::load(t.v + g * kVec, base + g * Layout::threads * kVec);
    return t;
  }
  // Loads tile i; elements past the end of the span read as `pad`. Element by element: this is the
  // one partial tile at the end, and simple predicated loads keep the kernel small to compile.
  __device__ tile_type load_masked(i64 i, value_type pad = value_type()) const {
    tile_type t;
    const i64 n = span.extent(0);
    const i64 first = i * kTile;
#pragma unroll
    for (int j = 0; j < tile_type::fragment; ++j) {
      const i64 at = first + tile_type::offset(j, threadIdx.x);
      t.v[j] = at < n ? span.data[at] : pad;
    }
    return t;
  }
  // Stores tile i, which must lie entirely inside the span.
  __device__ void store(const tile_type& t, i64 i) const {
    T* base = span.data + i * kTile + threadIdx.x * kVec;
#pragma unroll
    for (int g = 0; g < tile_type::groups; ++g)
      vector_io<value_type, kVec, Span::alignment>::store(base + g * Layout::threads * kVec, t.v + g * kVec);
  }
  // Stores the elements of tile i that lie inside the span.
  __device__ void store_masked(const tile_type& t, i64 i) const {
    const i64 n = span.extent(0);
    const i64 first = i * kTile;
#pragma unroll
    for (int j = 0; j < tile_type::fragment; ++j) {
      const i64 at = first + tile_type::offset(j, threadIdx.x);
      if (at < n) span.data[at] = t.v[j];
    }
  }
};
template <class Span, class Shape> partition_view(Span, Shape) -> partition_view<Span, Shape>;
template <class Span, class Shape, class Layout>
partition_view(Span, Shape, Layout) -> partition_view<Span, Shape, Layout>;

// ---- block index and ranges -----------------------------------------------------------------------
struct block_index {
  int x, y, z;
};
__device__ inline block_index bid() { return {int(blockIdx.x), int(blockIdx.y), int(blockIdx.z)}; }
__device__ inline block_index num_blocks() { return {int(gridDim.x), int(gridDim.y), int(gridDim.z)}; }

struct irange {
  struct iterator {
    int i;
    __device__ int operator*() const { return i; }
    __device__ iterator& operator++() { ++i; return *this; }
    __device__ bool operator!=(const iterator& o) const { return i != o.i; }
  };
  int first, last;
  __device__ irange(int a, int b) : first(a), last(b < a ? a : b) {}
  __device__ iterator begin() const { return {first}; }
  __device__ iterator end() const { return {last}; }
};

}  // namespace tiles
}  // namespace tilejit
