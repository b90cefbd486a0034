# zsh's own completion, driven as a person at the prompt drives it: an interactive zsh in a
# pseudo-terminal (zpty) with compinit, the kdebug script sourced, the line typed and then TAB.
# compadd is wrapped to write what zsh offers (after its own prefix matching) to OUT.
# usage: zsh -f zsh-complete.zsh SCRIPT LINE OUT
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='' RPROMPT=''; autoload -U compinit; compinit -u -D"
zpty -w z "compadd () { if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd \"\$@\"; return \$?; fi; typeset -a hits; builtin compadd -A hits \"\$@\"; print -rl -- \$hits >> ${(q)3}; }"
zpty -w z "comppostfuncs=(kdebug_done); kdebug_done () { print -r -- '<DONE>' >> ${(q)3}; }"
zpty -w z "source ${(q)1}"
zpty -w -n z "$2"$'\t'
for i in {1..200}; do grep -q '<DONE>' $3 2>/dev/null && break; sleep 0.05; done
zpty -d z
