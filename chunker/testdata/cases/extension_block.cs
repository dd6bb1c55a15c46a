namespace Demo
{
    public static class StringExtensions
    {
        extension(string s)
        {
            public int Twice() => s.Length * 2;

            public bool IsShout() => s.ToUpperInvariant() == s;
        }

        public static int Third(this string s) => s.Length * 3;
    }
}
