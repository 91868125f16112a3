import { Body, Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiConflictResponse, ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminRoute } from '../common/auth/admin-route.decorator';
import { Actor, CurrentActor, CurrentProductScope, type ProductScope } from '../common/auth/actor';
import { ErrorResponseDto } from '../common/errors/error-response.dto';
import { IdParamPipe } from '../common/http/id-param.pipe';
import { CreateProductDto, ProductDto, UpdateProductDto } from './dto/product.dto';
import { ProductsService } from './products.service';

@ApiTags('admin: products')
@Controller('api/v1/admin/products')
export class ProductsController {
  constructor(private readonly products: ProductsService) {}

  @Get()
  @AdminRoute('products:read')
  @ApiOperation({
    summary: 'List all products',
    description: 'Active and inactive, in id order; a token limited to products sees only those.',
  })
  @ApiOkResponse({ type: [ProductDto] })
  async list(@CurrentProductScope() products: ProductScope): Promise<ProductDto[]> {
    return (await this.products.listProducts(products)).map((product) => ProductDto.from(product));
  }

  @Get(':id')
  @AdminRoute('products:read')
  @ApiOperation({ summary: 'Get one product', description: 'With its default limits and available features.' })
  @ApiOkResponse({ type: ProductDto })
  @ApiNotFoundResponse({ description: "NOT_FOUND: no product with this id (or not one of the token's products)", type: ErrorResponseDto })
  async get(@Param('id', IdParamPipe) id: number, @CurrentProductScope() products: ProductScope): Promise<ProductDto> {
    return ProductDto.from(await this.products.getProduct(id, products));
  }

  @Post()
  @AdminRoute('products:write')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a product',
    description: 'code and key_prefix are unique; key_prefix starts every licence key of the product.',
  })
  @ApiCreatedResponse({ type: ProductDto })
  @ApiConflictResponse({ description: 'Duplicate code or key_prefix', type: ErrorResponseDto })
  async create(
    @Body() body: CreateProductDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<ProductDto> {
    return ProductDto.from(await this.products.createProduct(body, actor, products));
  }

  @Put(':id')
  @AdminRoute('products:write')
  @ApiOperation({ summary: 'Change a product (partial)', description: 'Only the fields sent change; existing licences keep their keys.' })
  @ApiOkResponse({ type: ProductDto })
  @ApiNotFoundResponse({ description: 'NOT_FOUND: no product with this id', type: ErrorResponseDto })
  @ApiConflictResponse({ description: 'Duplicate code or key_prefix', type: ErrorResponseDto })
  async update(
    @Param('id', IdParamPipe) id: number,
    @Body() body: UpdateProductDto,
    @CurrentActor() actor: Actor,
    @CurrentProductScope() products: ProductScope,
  ): Promise<ProductDto> {
    return ProductDto.from(await this.products.updateProduct(id, body, actor, products));
  }
}
