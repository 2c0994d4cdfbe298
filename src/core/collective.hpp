// Which all-to-all a call, a row or a class is of.
#pragma once

namespace a2a::detail {

enum class Collective { alltoall, alltoallv };

}  // namespace a2a::detail
