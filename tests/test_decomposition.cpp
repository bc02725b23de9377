// Decomposition geometry (no MPI): process grid choice, block distribution, neighbours, preflight limits.
#include <doctest/doctest.h>

#include <limits>
#include <set>
#include <string>
#include <vector>

#include "solver/case/errors.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/plan.hpp"

using namespace specwave;

TEST_CASE("the chosen process grid has the least halo exchange of all factorisations") {
  const std::vector<Dims3> shapes = {{100, 100, 100}, {64, 128, 256}, {300, 50, 50}, {37, 41, 43}};
  for (const auto& shape : shapes)
    for (int ranks : {1, 2, 3, 4, 6, 8, 12, 16, 27, 64}) {
      CAPTURE(ranks);
      const Dims3 p = choose_process_grid(shape, ranks, 4);
      CHECK(p[0] * p[1] * p[2] == ranks);
      long long brute = std::numeric_limits<long long>::max();
      for (int a = 1; a <= ranks; ++a)
        for (int b = 1; b <= ranks; ++b)
          if (ranks % (a * b) == 0) brute = std::min(brute, halo_exchange_points(shape, {a, b, ranks / (a * b)}, 4));
      CHECK(halo_exchange_points(shape, p, 4) == brute);
    }
  // A slab along z for a grid long in z, and z first on a cube (x stays contiguous).
  CHECK(choose_process_grid({400, 50, 50}, 4, 4) == Dims3{4, 1, 1});
  CHECK(choose_process_grid({100, 100, 100}, 2, 4) == Dims3{2, 1, 1});
  CHECK(choose_process_grid({100, 100, 100}, 8, 4) == Dims3{2, 2, 2});
  CHECK(choose_process_grid({100, 100, 100}, 6, 4, Dims3{1, 2, 3}) == Dims3{1, 2, 3});
  CHECK_THROWS_AS(choose_process_grid({100, 100, 100}, 6, 4, Dims3{2, 2, 2}), Error);
}

TEST_CASE("blocks cover the grid exactly once, also when sizes do not divide evenly") {
  const Dims3 shape{37, 41, 43};
  for (const Dims3& p : {Dims3{1, 1, 1}, Dims3{2, 1, 1}, Dims3{2, 2, 1}, Dims3{3, 2, 4}, Dims3{5, 3, 7}}) {
    const int ranks = p[0] * p[1] * p[2];
    long long covered = 0;
    std::set<std::array<int, 3>> starts;
    for (int r = 0; r < ranks; ++r) {
      const Subdomain s = subdomain_of(shape, p, r);
      CHECK(rank_of(p, s.coords) == r);
      covered += 1LL * s.extent[0] * s.extent[1] * s.extent[2];
      starts.insert(s.begin);
      for (int a = 0; a < 3; ++a) {
        CHECK(s.extent[a] >= shape[a] / p[a]);
        CHECK(s.extent[a] <= shape[a] / p[a] + 1);
        // The next block along a starts where this one ends.
        Dims3 next = s.coords;
        ++next[a];
        if (next[a] < p[a])
          CHECK(subdomain_of(shape, p, rank_of(p, next)).begin[a] == s.begin[a] + s.extent[a]);
        else
          CHECK(s.begin[a] + s.extent[a] == shape[a]);
      }
    }
    CHECK(covered == 1LL * shape[0] * shape[1] * shape[2]);
    CHECK(int(starts.size()) == ranks);
  }
  CHECK(rank_of({2, 2, 2}, {2, 0, 0}) == -1);
  CHECK(rank_of({2, 2, 2}, {0, -1, 0}) == -1);
}

TEST_CASE("subdomains thinner than the halo or the absorbing layer are refused, naming the limit") {
  CHECK_NOTHROW(check_decomposition({100, 100, 100}, {2, 2, 1}, 4, 20));
  try {
    check_decomposition({60, 100, 100}, {4, 1, 1}, 4, 20);
    FAIL("accepted a 15-point subdomain with a 20-point layer");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("absorbing layer") != std::string::npos);
  }
  try {
    check_decomposition({12, 100, 100}, {4, 1, 1}, 4, 0);
    FAIL("accepted a 3-point subdomain with a 4-point halo");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("stencil halo") != std::string::npos);
  }
}

TEST_CASE("blocks know their neighbours and the owner of every point") {
  const Dims3 shape{10, 7, 9}, p{2, 1, 3};
  for (int r = 0; r < 6; ++r) {
    const Block b = block_of(shape, p, r);
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        Dims3 c = b.sub.coords;
        c[a] += side ? 1 : -1;
        CHECK(b.neighbour[a][side] == rank_of(p, c));
      }
    for (int z = 0; z < shape[0]; ++z)
      for (int y = 0; y < shape[1]; ++y)
        for (int x = 0; x < shape[2]; ++x) CHECK(b.owns(z, y, x) == (owner_of(shape, p, z, y, x) == r));
  }
  CHECK(!whole_grid(shape).decomposed());
  CHECK(whole_grid(shape).points() == 630);
}

TEST_CASE("each MPI rank of a node drives its own GPU; more ranks than GPUs need run.share_devices") {
  Case c;
  c.run.device = 1;
  CHECK(device_of_rank(c, {1, 0, 1, 0}, 2) == 1);              // one rank: run.device
  CHECK_THROWS_AS(device_of_rank(c, {1, 0, 1, 0}, 1), Error);  // run.device out of range
  CHECK(device_of_rank(c, {8, 5, 4, 1}, 4) == 1);              // node rank 1 -> GPU 1
  CHECK(device_of_rank(c, {8, 7, 4, 3}, 4) == 3);
  try {
    device_of_rank(c, {8, 2, 8, 2}, 4);
    FAIL("expected 8 ranks on a 4-GPU node to be refused");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("share_devices") != std::string::npos);
  }
  c.run.share_devices = true;
  CHECK(device_of_rank(c, {8, 6, 8, 6}, 4) == 2);  // shared round-robin
  c.run.share_devices = false;
  CHECK(device_of_rank(c, {8, 3, 4, 3}, 1) == 0);  // one visible GPU (bound by the launcher): its device 0
  // Ranks on the same GPU are counted by uuid (use CUDA, uuid words): ranks 0 and 2 share one, rank 1 has its
  // own, rank 3 runs on no GPU.
  const std::vector<long long> keys = {1, 11, 12, 1, 21, 22, 1, 11, 12, 0, 0, 0};
  CHECK(ranks_on_device(keys, 0) == 2);
  CHECK(ranks_on_device(keys, 1) == 1);
  CHECK(ranks_on_device(keys, 2) == 2);
}
