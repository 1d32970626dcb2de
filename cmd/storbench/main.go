// Command storbench benchmarks and qualifies storage.
package main

import "github.com/storbench/storbench/internal/app"

func main() { app.Main() }
