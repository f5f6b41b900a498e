#pragma once
// The group-level matrix of a figure: between each pair of groups (fleet/groups.hpp), the median
// of the figure over the measured pairs from a rank of one to a rank of the other. At a thousand
// ranks the rank matrix is a million cells; the group matrix is what a reader takes in.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fleet/model.hpp"

namespace mtperf::fleet {

struct GroupMatrix {
  std::vector<std::string> groups;  // in order of their first rank; empty when the roster has none
  // [client's group][server's group]: the median of the measured pairs' figures (absent: none
  // measured), in the figure's unit (bits/s, 1/s, us), and how many pairs it is the median of.
  std::vector<std::vector<std::optional<double>>> median;
  std::vector<std::vector<size_t>> pairs;
};

GroupMatrix group_matrix(const FleetDoc& d, uint32_t transport, const std::string& figure);

// The matrix as text lines, figures multiplied by `scale` (the rank matrix's unit); "" when
// there are no groups.
std::string group_matrix_text(const GroupMatrix& m, double scale);
// {"names": [...], "cells": [[median|null]], "pairs": [[count]]}.
nlohmann::json to_json(const GroupMatrix& m);

}  // namespace mtperf::fleet
