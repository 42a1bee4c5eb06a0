// The few type utilities device templates need; NVRTC has no <type_traits>/<utility>/<tuple>.
#pragma once

namespace tilejit {

template <class T> struct remove_const { using type = T; };
template <class T> struct remove_const<const T> { using type = T; };

template <class A, class B> struct is_same { static constexpr bool value = false; };
template <class A> struct is_same<A, A> { static constexpr bool value = true; };

template <class T> struct is_integral { static constexpr bool value = false; };
template <> struct is_integral<int> { static constexpr bool value = true; };
template <> struct is_integral<long long> { static constexpr bool value = true; };
template <> struct is_integral<unsigned int> { static constexpr bool value = true; };
template <> struct is_integral<unsigned long long> { static constexpr bool value = true; };
template <> struct is_integral<long> { static constexpr bool value = true; };
template <> struct is_integral<unsigned long> { static constexpr bool value = true; };

template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };

template <int... Is> struct index_seq {};
template <int N, int... Is> struct make_index_seq_impl : make_index_seq_impl<N - 1, N - 1, Is...> {};
template <int... Is> struct make_index_seq_impl<0, Is...> { using type = index_seq<Is...>; };
template <int N> using make_index_seq = typename make_index_seq_impl<N>::type;

template <class... Ts> struct type_list {
  static constexpr int size = sizeof...(Ts);
};

// A minimal tuple: tuple<A, B> holds an A and a B, reached with get<I>.
template <int I, class T> struct tuple_leaf {
  T value;
};
template <class Seq, class... Ts> struct tuple_base;
template <int... Is, class... Ts> struct tuple_base<index_seq<Is...>, Ts...> : tuple_leaf<Is, Ts>... {};
template <class... Ts> struct tuple : tuple_base<make_index_seq<sizeof...(Ts)>, Ts...> {};

template <int I, class T> __host__ __device__ constexpr T& get(tuple_leaf<I, T>& leaf) { return leaf.value; }
template <int I, class T> __host__ __device__ constexpr const T& get(const tuple_leaf<I, T>& leaf) { return leaf.value; }

}  // namespace tilejit
