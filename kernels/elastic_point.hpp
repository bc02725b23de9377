#pragma once
// Per-point physics of the isotropic elastic velocity-stress scheme (docs/numerics.md, "Isotropic elastic waves"),
// shared by the CPU loops and, later, the CUDA kernels. Fields on the standard staggered grid: a field that lies half
// way along axis a holds the point i + 1/2 at index i (as the acoustic staggered scheme's w_a), in a padded
// FieldLayout whose halo staggered_halo(R) holds the half points -R .. -1 and n - 1 .. n + R - 2 and the zeros beyond.
#include <cstdint>

#include "kernels/common.hpp"

namespace specwave {

// The nine fields, in this order everywhere (arrays, checkpoints, the stencils' GridPointWeight::field).
enum ElasticField : std::uint8_t { szz = 0, syy = 1, sxx = 2, szy = 3, szx = 4, syx = 5, vz = 6, vy = 7, vx = 8 };
inline constexpr int elastic_fields = 9;
// A moment-tensor source's weights on stress field f are tagged f + moment_field_offset (GridPointWeight::field): the
// propagator injects them as a moment rate, not as a pressure source's running sum.
inline constexpr std::uint8_t moment_field_offset = 16;

// Whether field f lies half way along axis a (0 z, 1 y, 2 x).
SPECWAVE_HD constexpr bool elastic_half(int f, int a) {
  constexpr unsigned char mask[9] = {0b000, 0b000, 0b000, 0b110, 0b101, 0b011, 0b100, 0b010, 0b001};
  return (mask[f] >> (2 - a)) & 1;
}

// v^{n+1/2} = v^{n-1/2} + dt b (sum of the three stress derivatives): `bdt` = dt b at the point.
template <class T>
SPECWAVE_HD inline T elastic_velocity(T v, T bdt, T sum) {
  return v + bdt * sum;
}

// s_aa^{n+1} = s_aa^n + dt (lambda (e_z + e_y + e_x) + 2 mu e_a): `lamdt` = dt lambda, `mu2dt` = 2 dt mu.
template <class T>
SPECWAVE_HD inline T elastic_normal_stress(T s, T lamdt, T mu2dt, T trace, T e_a) {
  return s + (lamdt * trace + mu2dt * e_a);
}

// s_ab^{n+1} = s_ab^n + dt mu_ab (D_b v_a + D_a v_b): `mudt` = dt mu_ab (the harmonic mean of its four nodes).
template <class T>
SPECWAVE_HD inline T elastic_shear_stress(T s, T mudt, T d1, T d2) {
  return s + mudt * (d1 + d2);
}

// A CPML memory variable of one derivative G (first-order form, kappa = 1): psi^new = b psi^old + a G; the update
// then uses G + psi^new.
template <class T>
SPECWAVE_HD inline T elastic_cpml_memory(T b, T psi, T a, T g) {
  return b * psi + a * g;
}

}  // namespace specwave
