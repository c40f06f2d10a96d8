# The session driven through a pseudo-terminal, every command (sess_pty.py).
exec python3 "$(dirname "$0")/sess_pty.py"
