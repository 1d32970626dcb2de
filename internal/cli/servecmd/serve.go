// Package servecmd implements "storbench serve": the web dashboard over
// the results database, read-only.
package servecmd

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/web"
)

type flags struct {
	listen    string
	token     string
	tokenFile string
	insecure  bool
}

// NewCommand returns the serve command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the dashboard: runs, a run live, compare, over the database (read-only)",
		Long: `Serve a web dashboard over the results database: the runs list with
filters, each run (results, percentiles, telemetry, limits, verdicts; a run
in progress is followed live), and comparisons. Pages are plain HTML and
SVG: nothing is fetched from elsewhere and they work without JavaScript.
The database is opened read-only and never written; a run may write it
meanwhile.

Listening on anything but loopback needs a bearer token (--token,
STORBENCH_TOKEN or --token-file), or --insecure-listen to go without one.`,
		Example: `  storbench serve
  storbench serve --listen 0.0.0.0:8080 --token-file /etc/storbench/token
  STORBENCH_TOKEN=s3cret storbench serve --listen :8080 --db /data/results.db`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8080", "HOST:PORT to listen on (port 0: any free port)")
	fl.StringVar(&f.token, "token", "", "require this bearer token (visible in ps: prefer STORBENCH_TOKEN or --token-file)")
	fl.StringVar(&f.tokenFile, "token-file", "", "read the bearer token from this file (first line)")
	fl.BoolVar(&f.insecure, "insecure-listen", false, "allow listening beyond loopback without a token")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		token, err := web.ResolveToken(f.token, f.tokenFile, d.Getenv("STORBENCH_TOKEN"))
		if err != nil {
			return cli.Usage(err)
		}
		loopback, err := web.CheckListen(f.listen, token != "", f.insecure)
		if err != nil {
			return cli.Usage(err)
		}
		l, err := net.Listen("tcp", f.listen)
		if err != nil {
			return cli.Usagef("--listen %s: %w", f.listen, err)
		}
		srv := web.New(web.Options{DB: d.DBPath(), Token: token})
		defer srv.Close()
		gate := "no token required"
		switch {
		case token != "":
			gate = "bearer token required"
		case !loopback:
			gate = "NO token required (--insecure-listen): anyone who can reach it can read every result"
		}
		fmt.Fprintf(d.ErrOut, "storbench serve: listening on http://%s/ (%s); database %s, read-only\n", l.Addr(), gate, d.DBPath())
		return srv.Serve(cmd.Context(), l)
	}
	return cmd
}
