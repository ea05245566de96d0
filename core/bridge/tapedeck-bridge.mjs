// The tapedeck bridge plugin for DSH (issue 21); its source replaces this empty module.
