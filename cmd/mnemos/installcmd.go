package main

// mnemos install AGENT and mnemos uninstall AGENT are the words a newcomer
// types first; they are mnemos hook install and mnemos hook uninstall,
// with --user (the default) said out loud beside --project.

// InstallCmd is mnemos install AGENT: the same as mnemos hook install.
type InstallCmd struct {
	HookInstallCmd
	User bool `help:"Write your own settings (the default)."`
}

// Run checks the scope flags, then installs as mnemos hook install does.
func (c *InstallCmd) Run(a *app) error {
	if err := scopeFlags(c.User, c.Project); err != nil {
		return err
	}
	return c.HookInstallCmd.Run(a)
}

// UninstallCmd is mnemos uninstall AGENT: the same as mnemos hook uninstall.
type UninstallCmd struct {
	HookUninstallCmd
	User bool `help:"Edit your own settings (the default)."`
}

// Run checks the scope flags, then uninstalls as mnemos hook uninstall
// does.
func (c *UninstallCmd) Run(a *app) error {
	if err := scopeFlags(c.User, c.Project); err != nil {
		return err
	}
	return c.HookUninstallCmd.Run(a)
}

// scopeFlags refuses --user with --project: one settings file at a time.
func scopeFlags(user, project bool) error {
	if user && project {
		return &exitError{code: exitUsage, msg: "--user and --project name different settings files; give one of them",
			hint: "--user (the default) writes yours, --project the workspace's, shared with whoever uses the project"}
	}
	return nil
}
