#include "completions.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include "commands.h"
#include "common.h"

namespace jqtrace::cli {
namespace {

/// The fixed values a validator of opt accepts: CLI::IsMember describes itself as
/// "{a,b,c}"; other validators (ranges, existing files) say something else.
std::vector<std::string> member_values(CLI::Option& opt) {
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = opt.get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
    std::string d = v->get_description();
    if (d.size() < 2 || d.front() != '{' || d.back() != '}') continue;
    std::vector<std::string> values;
    std::string item;
    for (char c : d.substr(1, d.size() - 2)) {
      if (c == ',') values.push_back(std::exchange(item, {}));
      else item += c;
    }
    values.push_back(item);
    return values;
  }
}

OptionSpec describe(CLI::Option& opt) {
  OptionSpec o;
  for (const std::string& l : opt.get_lnames()) o.names.push_back("--" + l);
  for (const std::string& s : opt.get_snames()) o.names.push_back("-" + s);
  o.help = opt.get_description();
  o.takes_value = opt.get_items_expected_max() > 0;  // flags expect no items
  const std::string& text = opt.get_option_text();
  o.file_value = o.takes_value && (text == "PATH" || text == "FILE" || text == "F");
  o.values = member_values(opt);
  return o;
}

std::vector<OptionSpec> named_options(CLI::App& app) {
  std::vector<OptionSpec> out;
  for (CLI::Option* opt : app.get_options([](CLI::Option* o) { return o->nonpositional(); }))
    out.push_back(describe(*opt));
  return out;
}

std::string words(const std::vector<std::string>& w) { return fmt::format("{}", fmt::join(w, " ")); }

std::vector<std::string> all_names(const std::vector<OptionSpec>& options) {
  std::vector<std::string> names;
  for (const OptionSpec& o : options) names.insert(names.end(), o.names.begin(), o.names.end());
  return names;
}

/// For a single-quoted shell string: ' becomes '\''.
std::string shell_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// A zsh _arguments description: brackets and colons escaped.
std::string zsh_description(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out;
}

/// The bash case arm completing the value of the option before the cursor, if it takes one.
std::string bash_value_cases(const std::vector<OptionSpec>& options) {
  std::string out;
  for (const OptionSpec& o : options) {
    if (!o.takes_value) continue;
    std::string pattern = fmt::format("{}", fmt::join(o.names, "|"));
    if (!o.values.empty())
      out += fmt::format("        {}) COMPREPLY=($(compgen -W '{}' -- \"$cur\")); return ;;\n", pattern, words(o.values));
    else if (o.file_value)
      out += fmt::format("        {}) _jqtrace_files any; return ;;\n", pattern);
    else
      out += fmt::format("        {}) return ;;\n", pattern);  // a number, a kind, a range: nothing to offer
  }
  return out;
}

}  // namespace

std::vector<CommandSpec> describe_commands(CLI::App& app) {
  std::vector<CommandSpec> out;
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    CommandSpec c;
    c.name = sub->get_name();
    c.help = sub->get_description();
    c.options = named_options(*sub);
    c.trace_arguments = c.name != "phases" && c.name != "completions";
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<OptionSpec> describe_options(CLI::App& app) { return named_options(app); }

std::string bash_completion(const std::vector<CommandSpec>& commands, const std::vector<OptionSpec>& global) {
  std::vector<std::string> names;
  for (const CommandSpec& c : commands) names.push_back(c.name);
  std::string script = fmt::format(R"(# bash completion for jqtrace (written by `jqtrace completions bash`)

# Files for the word being completed: with "traces", trace files (*.json, *.json.gz, *.gz,
# *.zst) and directories first, any file when there is none.
_jqtrace_files() {{
  local f
  local -a traces=() others=()
  while IFS= read -r f; do
    if [ -d "$f" ]; then traces+=("$f")
    elif [ "$1" = traces ]; then
      case "$f" in *.json|*.json.gz|*.gz|*.zst) traces+=("$f") ;; *) others+=("$f") ;; esac
    else others+=("$f")
    fi
  done < <(compgen -f -- "$cur")
  compopt -o filenames 2> /dev/null
  COMPREPLY=("${{traces[@]}}" "${{others[@]}}")
  [ "$1" = traces ] && [ ${{#traces[@]}} -gt 0 ] && COMPREPLY=("${{traces[@]}}")
  return 0
}}

_jqtrace() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" command="" i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${{COMP_WORDS[i]}}" in
      {0}) command="${{COMP_WORDS[i]}}"; break ;;
    esac
  done
  if [ -z "$command" ]; then
    case "$prev" in
      help) COMPREPLY=($(compgen -W '{1}' -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W '{1} help {2}' -- "$cur"))
    return
  fi
  case "$command" in
)",
                                   fmt::join(names, "|"), words(names), words(all_names(global)));
  for (const CommandSpec& c : commands) {
    script += fmt::format("    {})\n      case \"$prev\" in\n{}      esac\n", c.name, bash_value_cases(c.options));
    script += fmt::format("      if [[ \"$cur\" == -* ]]; then COMPREPLY=($(compgen -W '{}' -- \"$cur\")); return; fi\n",
                          words(all_names(c.options)));
    if (c.name == "completions")
      script += "      COMPREPLY=($(compgen -W 'bash zsh fish' -- \"$cur\"))\n      ;;\n";
    else
      script += fmt::format("      _jqtrace_files {}\n      ;;\n", c.trace_arguments ? "traces" : "any");
  }
  script += "  esac\n}\n\ncomplete -F _jqtrace jqtrace\n";
  return script;
}

std::string zsh_completion(const std::vector<CommandSpec>& commands, const std::vector<OptionSpec>& global) {
  std::string script = "#compdef jqtrace\n# zsh completion for jqtrace (written by `jqtrace completions zsh`)\n\n";
  script += "_jqtrace() {\n  local -a commands\n  commands=(\n";
  for (const CommandSpec& c : commands) {
    std::string help;  // _describe takes "name:description": only quotes need care
    for (char ch : c.help) help += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    script += fmt::format("    '{}:{}'\n", c.name, help);
  }
  script += "  )\n  if (( CURRENT == 2 )); then\n    _describe -t commands 'jqtrace command' commands\n";
  script += "    _arguments";
  for (const OptionSpec& o : global)
    for (const std::string& n : o.names) script += fmt::format(" '{}[{}]'", n, zsh_description(o.help));
  script += "\n    return\n  fi\n  local command=$words[2]\n  shift words\n  (( CURRENT-- ))\n  case $command in\n";
  for (const CommandSpec& c : commands) {
    script += fmt::format("    {})\n      _arguments -s", c.name);
    for (const OptionSpec& o : c.options)
      for (const std::string& n : o.names) {
        std::string action;
        if (!o.values.empty()) action = fmt::format(":value:({})", words(o.values));
        else if (o.file_value) action = ":file:_files";
        else if (o.takes_value) action = ":value: ";
        script += fmt::format(" \\\n        '{}[{}]{}'", n, zsh_description(o.help), action);
      }
    if (c.name == "completions") script += " \\\n        ':shell:(bash zsh fish)'";
    else if (c.trace_arguments) script += " \\\n        '*:trace:_files -g \"*.(json|gz|zst)(-.)\"'";
    else script += " \\\n        '*:file:_files'";
    script += "\n      ;;\n";
  }
  script += "  esac\n}\n\n_jqtrace \"$@\"\n";
  return script;
}

std::string fish_completion(const std::vector<CommandSpec>& commands, const std::vector<OptionSpec>& global) {
  std::vector<std::string> names;
  for (const CommandSpec& c : commands) names.push_back(c.name);
  std::string script = "# fish completion for jqtrace (written by `jqtrace completions fish`)\n";
  script += "complete -c jqtrace -f\n";
  for (const CommandSpec& c : commands)
    script += fmt::format("complete -c jqtrace -n '__fish_use_subcommand' -a {} -d {}\n", c.name, shell_quoted(c.help));
  auto option_line = [](const std::string& condition, const OptionSpec& o) {
    std::string line = "complete -c jqtrace -n " + shell_quoted(condition);
    for (const std::string& n : o.names) line += n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
    if (!o.values.empty()) line += " -x -a " + shell_quoted(words(o.values));
    else if (o.file_value) line += " -r -F";
    else if (o.takes_value) line += " -x";
    return line + " -d " + shell_quoted(o.help) + "\n";
  };
  for (const OptionSpec& o : global) script += option_line("__fish_use_subcommand", o);
  for (const CommandSpec& c : commands) {
    std::string condition = "__fish_seen_subcommand_from " + c.name;
    for (const OptionSpec& o : c.options) script += option_line(condition, o);
    if (c.name == "completions")
      script += "complete -c jqtrace -n " + shell_quoted(condition) + " -x -a 'bash zsh fish'\n";
    else if (c.trace_arguments)
      script += "complete -c jqtrace -n " + shell_quoted(condition) +
                " -k -a '(__fish_complete_suffix .json; __fish_complete_suffix .gz; __fish_complete_suffix .zst)'\n";
    else
      script += "complete -c jqtrace -n " + shell_quoted(condition) + " -F\n";
  }
  return script;
}

void setup_completions(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("completions", "Print a shell completion script (bash, zsh or fish)");
  cmd->add_option("SHELL", *shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->footer(
      "Examples:\n"
      "  jqtrace completions bash > ~/.local/share/bash-completion/completions/jqtrace\n"
      "  jqtrace completions zsh > \"${fpath[1]}/_jqtrace\"\n"
      "  jqtrace completions fish > ~/.config/fish/completions/jqtrace.fish");
  CLI::App* root = &app;
  cmd->callback([shell, root]() {
    std::vector<CommandSpec> commands = describe_commands(*root);
    std::vector<OptionSpec> global = describe_options(*root);
    std::string script = *shell == "bash" ? bash_completion(commands, global)
                         : *shell == "zsh" ? zsh_completion(commands, global)
                                           : fish_completion(commands, global);
    fmt::print("{}", script);
    throw CommandDone{std::fflush(stdout) == 0 && !std::ferror(stdout) ? kOk : kInput};
  });
}

}  // namespace jqtrace::cli
