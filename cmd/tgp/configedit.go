package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// setConfigValue sets section.key to value in a YAML configuration file,
// changing only that value's text (comments, order and every other byte
// stay as the user left them). It returns the old value and whether the
// file changed. The file is parsed with a YAML library to find where the
// value is; the edit itself is textual so nothing else is re-serialised.
func setConfigValue(path, section, key, value string) (old string, changed bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	quoted := strconv.Quote(value)
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		// An empty file: write the section.
		out := append(bytes.TrimRight(data, "\n"), []byte(fmt.Sprintf("\n%s:\n  %s: %s\n", section, key, quoted))...)
		return "", true, os.WriteFile(path, bytes.TrimLeft(out, "\n"), 0o644)
	}
	var sec, secKey *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == section {
			secKey, sec = root.Content[i], root.Content[i+1]
		}
	}
	if sec == nil || sec.Kind != yaml.MappingNode || len(sec.Content) == 0 {
		if sec != nil && secKey != nil && sec.Kind == yaml.ScalarNode && sec.Value == "" {
			// "git:" with nothing under it: add the key below.
			at := secKey.Line // 1-based: insert after it
			lines = append(lines[:at], append([]string{fmt.Sprintf("  %s: %s\n", key, quoted)}, lines[at:]...)...)
			return "", true, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
		}
		if sec != nil {
			return "", false, fmt.Errorf("%s: %s is not a mapping; edit it by hand", path, section)
		}
		out := string(data)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += fmt.Sprintf("%s:\n  %s: %s\n", section, key, quoted)
		return "", true, os.WriteFile(path, []byte(out), 0o644)
	}
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, v := sec.Content[i], sec.Content[i+1]
		if k.Value != key {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return "", false, fmt.Errorf("%s: %s.%s is not a plain value; edit it by hand", path, section, key)
		}
		if v.Value == value {
			return v.Value, false, nil
		}
		line := lines[v.Line-1]
		start := v.Column - 1
		end := scalarEnd(line, start, v.Style)
		lines[v.Line-1] = line[:start] + quoted + line[end:]
		return v.Value, true, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
	}
	// The section exists without the key: add it after the section's first
	// key, with that key's indentation.
	first := sec.Content[0]
	indent := strings.Repeat(" ", first.Column-1)
	at := first.Line - 1
	lines = append(lines[:at], append([]string{fmt.Sprintf("%s%s: %s\n", indent, key, quoted)}, lines[at:]...)...)
	return "", true, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644)
}

// scalarEnd finds where a one-line scalar that starts at start ends.
func scalarEnd(line string, start int, style yaml.Style) int {
	switch {
	case style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(line); i++ {
			if line[i] == '\\' {
				i++
				continue
			}
			if line[i] == '"' {
				return i + 1
			}
		}
	case style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(line); i++ {
			if line[i] == '\'' {
				if i+1 < len(line) && line[i+1] == '\'' {
					i++
					continue
				}
				return i + 1
			}
		}
	}
	end := len(strings.TrimRight(line, "\r\n"))
	if i := strings.Index(line[start:], " #"); i >= 0 && start+i < end {
		end = start + i
	}
	return start + len(strings.TrimRight(line[start:end], " \t"))
}
