<?php
declare(strict_types=1);

namespace App\Models;

use Illuminate\Support\Str;
use App\Contracts\{Foo, Bar as B};
use function App\helpers\fmt;

/**
 * Doc.
 */
#[Attr]
final class User extends Model implements HasName
{
    use SoftDeletes;
    private int $x = 1;
    public function __construct(private string $name) {}
    // c
    public static function make(string $n): static
    {
        return new static($n);
    }
}
interface HasName { public function name(): string; }
trait T { function t() {} }
enum Suit: string { case H = 'h'; }
function helper($a) { return $a; }
