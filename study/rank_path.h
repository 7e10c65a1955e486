#pragma once
// The name of a rank's own copy of what an MPI run shares (a journal, a staging folder): PATH for
// rank 0, PATH.rank-R beside it for rank R. Every file and folder the ranks split is named here.
#include <string>
#include <utility>
#include <vector>

namespace mf {

// PATH for rank 0, else PATH.rank-R.
std::string rank_sibling(const std::string& path, int rank);
// PATH with a trailing ".rank-R" (R a whole number) cut off; PATH when it has none.
std::string rank_sibling_base(const std::string& path);
// The siblings of PATH of rank 1 and above that exist beside it (files or folders), in rank order:
// {rank, its path}. None when PATH's folder cannot be read.
std::vector<std::pair<int, std::string>> rank_siblings(const std::string& path);

}  // namespace mf
