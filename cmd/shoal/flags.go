package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// parseFlags parses a subcommand's flags, which the caller bound to the
// fields of its config (holding the defaults), plus --config. Precedence:
// defaults, then the TOML file named by --config, then every flag given
// explicitly. With --config, reload resets the config to its defaults and
// loads the file, and the explicit flags are set again on top of it.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, usage string, reload func(path string) error) error {
	cfgFile := fs.String("config", "", "path of a TOML config file; flags override it")
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nflags:\n", usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if *cfgFile == "" {
		return nil
	}
	explicit := map[string]string{}
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "config" {
			explicit[f.Name] = f.Value.String()
		}
	})
	if err := reload(*cfgFile); err != nil {
		return err
	}
	for name, v := range explicit {
		if err := fs.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}
