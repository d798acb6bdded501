package service

import (
	"flag"
	"fmt"
	"strings"
)

// EnvName is the environment variable that stands in for a flag: prefix, then the flag's
// name upper-cased with '-' as '_' (--node-index with prefix REPLICA_ is REPLICA_NODE_INDEX).
func EnvName(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// EnvFallback gives every flag of fs that the command line did not set the value of its
// environment variable (EnvName), looked up with lookupEnv (os.LookupEnv in a main). Call it
// after fs.Parse: a flag given on the command line wins, then a non-empty variable, then the
// default. An error names the variable, its value and the flag it stands in for.
func EnvFallback(fs *flag.FlagSet, prefix string, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		key := EnvName(prefix, f.Name)
		if v, ok := lookupEnv(key); ok && v != "" {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s=%q: %w (it stands in for --%s)", key, v, serr, f.Name)
			}
		}
	})
	return err
}
