#pragma once
// The access levels of docs/security.md ("Access per route"), lowest first: a token of a level
// may do what every lower level may. `anyone` is the public level, for which no token is read.
namespace queen::auth {

enum class access_level { anyone, read_only, read_write, admin };

}  // namespace queen::auth
