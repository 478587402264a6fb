// roofplan/version.hpp — library version.
#pragma once

#define ROOFPLAN_VERSION_MAJOR 0
#define ROOFPLAN_VERSION_MINOR 1
#define ROOFPLAN_VERSION_PATCH 0

namespace roofplan {
inline constexpr const char* version = "0.1.0";
}
